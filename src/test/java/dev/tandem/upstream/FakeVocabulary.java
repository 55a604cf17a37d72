package dev.tandem.upstream;

import java.util.ArrayList;
import java.util.List;

/**
 * The fake upstreams' tokenizer: ids 0–2 are {@code <s>}, {@code </s>}, {@code <unk>} (no text), 3–97
 * the printable ASCII characters, 98 and 99 the words " the" and " and" (so a token can stand for
 * several bytes). Encoding is greedy, words first, as a server-side tokenizer would be.
 */
final class FakeVocabulary {
    static final int BOS = 0;
    static final int UNK = 2;
    static final int SIZE = 100;
    private static final String[] WORDS = {" the", " and"};

    private FakeVocabulary() {}

    static String piece(int id) {
        if (id < 3) {
            return "";
        }
        if (id < 98) {
            return String.valueOf((char) (id - 3 + 32));
        }
        return WORDS[id - 98];
    }

    static int[] encode(String text, boolean addSpecial) {
        List<Integer> ids = new ArrayList<>();
        if (addSpecial) {
            ids.add(BOS);
        }
        int i = 0;
        outer:
        while (i < text.length()) {
            for (int w = 0; w < WORDS.length; w++) {
                if (text.startsWith(WORDS[w], i)) {
                    ids.add(98 + w);
                    i += WORDS[w].length();
                    continue outer;
                }
            }
            char c = text.charAt(i++);
            ids.add(c >= 32 && c <= 126 ? c - 32 + 3 : UNK);
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    static String decode(int[] ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            sb.append(piece(id));
        }
        return sb.toString();
    }
}
