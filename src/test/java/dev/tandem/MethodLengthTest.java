package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * No method of the main sources is longer than a reader takes in at once: 80 lines, signature to closing
 * brace, outside the reference engine's numeric kernels (a transformer layer reads best as one piece).
 * The sources are parsed with the JDK's own compiler API, so a lambda or an anonymous class counts in the
 * method that holds it. The longest method is printed, to watch the margin.
 */
class MethodLengthTest {
    static final int MAX_LINES = 80;

    /** The kernels: numeric loops that read as one piece, written after llama2.c's run.c. */
    private static final Set<String> KERNELS = Set.of(
            "src/main/java/dev/tandem/engine/reference/TransformerMath.java",
            "src/main/java/dev/tandem/engine/reference/BatchForward.java",
            "src/main/java/dev/tandem/engine/reference/VectorMatmul.java",
            "src/main/java/dev/tandem/engine/reference/MatmulKernel.java",
            "src/main/java/dev/tandem/engine/reference/ParallelMatmul.java");

    record Method(String where, int lines) {}

    @Test
    void noMethodIsOver80LinesOutsideTheKernels() throws IOException {
        List<Method> methods = methods(Path.of("src", "main", "java"));
        assertTrue(methods.size() > 1000, "parsed " + methods.size() + " methods: the scan found the sources");
        Method longest =
                methods.stream().max(Comparator.comparingInt(Method::lines)).orElseThrow();
        System.out.println(
                "longest method outside the kernels: " + longest.where() + ", " + longest.lines() + " lines");
        List<String> tooLong = methods.stream()
                .filter(m -> m.lines() > MAX_LINES)
                .map(m -> m.where() + " (" + m.lines() + " lines)")
                .toList();
        assertEquals(List.of(), tooLong, "split these into steps with names");
    }

    static List<Method> methods(Path root) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(root)) {
            files = walk.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !KERNELS.contains(p.toString().replace('\\', '/')))
                    .toList();
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        List<Method> out = new ArrayList<>();
        try (StandardJavaFileManager fm = compiler.getStandardFileManager(null, null, null)) {
            JavacTask task = (JavacTask) compiler.getTask(
                    null, fm, d -> {}, List.of("-proc:none"), null, fm.getJavaFileObjectsFromPaths(files));
            SourcePositions positions = Trees.instance(task).getSourcePositions();
            for (CompilationUnitTree unit : task.parse()) {
                LineMap lines = unit.getLineMap();
                new TreePathScanner<Void, Void>() {
                    @Override
                    public Void visitMethod(MethodTree method, Void unused) {
                        long start = positions.getStartPosition(unit, method);
                        long end = positions.getEndPosition(unit, method);
                        if (start >= 0 && end >= 0) {
                            int first = (int) lines.getLineNumber(start);
                            int n = (int) lines.getLineNumber(end) - first + 1;
                            String file = Path.of(unit.getSourceFile().toUri())
                                    .getFileName()
                                    .toString();
                            out.add(new Method(file + ":" + first + " " + method.getName(), n));
                        }
                        return super.visitMethod(method, unused);
                    }
                }.scan(unit, null);
            }
        }
        return out;
    }
}
