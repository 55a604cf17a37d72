package dev.tandem.engine.tokenizer;

import java.time.LocalDateTime;
import java.time.format.TextStyle;
import java.util.Locale;

/** Python's {@code datetime.strftime} in the C locale, for the directives templates use. */
final class PyStrftime {

    private PyStrftime() {}

    static String format(LocalDateTime t, String format) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                sb.append(c);
                continue;
            }
            char d = format.charAt(++i);
            switch (d) {
                case 'd' -> sb.append(String.format("%02d", t.getDayOfMonth()));
                case 'm' -> sb.append(String.format("%02d", t.getMonthValue()));
                case 'Y' -> sb.append(t.getYear());
                case 'y' -> sb.append(String.format("%02d", t.getYear() % 100));
                case 'H' -> sb.append(String.format("%02d", t.getHour()));
                case 'I' -> sb.append(String.format("%02d", (t.getHour() + 11) % 12 + 1));
                case 'M' -> sb.append(String.format("%02d", t.getMinute()));
                case 'S' -> sb.append(String.format("%02d", t.getSecond()));
                case 'p' -> sb.append(t.getHour() < 12 ? "AM" : "PM");
                case 'j' -> sb.append(String.format("%03d", t.getDayOfYear()));
                case 'b' -> sb.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> sb.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> sb.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case '%' -> sb.append('%');
                default -> sb.append('%').append(d);
            }
        }
        return sb.toString();
    }
}
