package dev.tandem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README stays a first read (at most 200 lines), and no page sends a reader nowhere: every relative
 * link of README.md and src/site/markdown/*.md names a file that exists (a page's images and charts live
 * in src/site/resources) and, with a {@code #fragment}, a heading of that file as GitHub names it.
 */
class DocsLinksTest {
    static final int README_MAX_LINES = 200;

    private static final Path SITE = Path.of("src", "site", "markdown");
    private static final Path RESOURCES = Path.of("src", "site", "resources");
    private static final Pattern LINK =
            Pattern.compile("!?\\[(?:[^\\[\\]]|\\[[^\\]]*\\])*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern FENCE = Pattern.compile("^\\s*(```+|~~~+)");

    private final Map<Path, Set<String>> anchors = new HashMap<>();

    @Test
    void theReadmeStaysAFirstRead() throws IOException {
        int lines = Files.readAllLines(Path.of("README.md")).size();
        assertTrue(lines <= README_MAX_LINES, "README.md has " + lines + " lines; move detail to src/site/markdown");
    }

    @Test
    void everyRelativeLinkResolves() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> site = Files.list(SITE)) {
            site.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        assertTrue(pages.size() > 5, "found the pages: " + pages);
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path page : pages) {
            List<String> lines = withoutCode(Files.readAllLines(page));
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = LINK.matcher(lines.get(i).replaceAll("`[^`]*`", ""));
                while (m.find()) {
                    String target = m.group(1);
                    if (target.matches("^[a-z]+:.*")) {
                        continue; // http:, https:, mailto:
                    }
                    links++;
                    String problem = problem(page, target);
                    if (problem != null) {
                        broken.add(page + ":" + (i + 1) + ": " + target + " (" + problem + ")");
                    }
                }
            }
        }
        assertTrue(links > 50, "checked " + links + " links");
        assertEquals(List.of(), broken);
    }

    private String problem(Path page, String target) {
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String fragment = hash < 0 ? "" : target.substring(hash + 1);
        Path resolved = page;
        if (!file.isEmpty()) {
            Path dir = page.toAbsolutePath().getParent();
            resolved = dir.resolve(file).normalize();
            if (!Files.exists(resolved) && page.startsWith(SITE)) {
                resolved = RESOURCES.toAbsolutePath().resolve(file).normalize();
            }
            if (!Files.exists(resolved)) {
                return "no such file";
            }
        }
        if (fragment.isEmpty()) {
            return null;
        }
        if (!resolved.toString().endsWith(".md")) {
            return "a fragment into a file that is not a page";
        }
        return anchorsOf(resolved).contains(fragment) ? null : "no such heading";
    }

    private Set<String> anchorsOf(Path page) {
        return anchors.computeIfAbsent(page.toAbsolutePath().normalize(), p -> {
            try {
                Map<String, Integer> seen = new HashMap<>();
                Set<String> out = new HashSet<>();
                for (String line : withoutCode(Files.readAllLines(p))) {
                    Matcher m = HEADING.matcher(line);
                    if (m.matches()) {
                        String slug = slug(m.group(2));
                        Integer n = seen.merge(slug, 0, (a, b) -> a + 1);
                        out.add(n == 0 ? slug : slug + "-" + n);
                    }
                }
                return out;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** GitHub's heading ids: link text kept, code marks dropped, lower case, punctuation gone, spaces to '-'. */
    static String slug(String heading) {
        String text = heading.replaceAll("!?\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                .replace("`", "")
                .strip()
                .toLowerCase(Locale.ROOT);
        return text.replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
    }

    /** The lines with fenced code blanked out: a link or heading in a code sample is text, not markup. */
    private static List<String> withoutCode(List<String> lines) {
        List<String> out = new ArrayList<>(lines.size());
        String fence = null;
        for (String line : lines) {
            Matcher m = FENCE.matcher(line);
            if (m.find()) {
                if (fence == null) {
                    fence = m.group(1).substring(0, 3);
                    out.add("");
                    continue;
                }
                if (line.strip().startsWith(fence)) {
                    fence = null;
                    out.add("");
                    continue;
                }
            }
            out.add(fence == null ? line : "");
        }
        return out;
    }
}
