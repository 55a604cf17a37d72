package dev.tandem.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UnpairedSurrogatesTest {
    @ParameterizedTest
    @CsvSource({
        "'', false",
        "plain, false",
        "ü→漢, false",
        "\ud83d\ude00, false",
        "a\ud83d\ude00b\ud83d\ude00, false",
        "\ud800, true",
        "a\ud800b, true",
        "\udc00, true",
        "\ude00\ud83d, true",
        "\ud83d\ud83d\ude00, true",
        "ok\ud83d, true"
    })
    void findsEverySurrogateWithoutItsPair(String text, boolean unpaired) {
        assertEquals(
                unpaired,
                UnpairedSurrogates.in(text),
                text.chars().mapToObj(Integer::toHexString).toList().toString());
    }
}
