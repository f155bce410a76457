package io.kvtier.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A kvtier config file: one {@code name value} per line, names as the long flags without dashes ({@code memory 4g},
 * {@code port 6380}); blank lines and lines starting with '#' are ignored; a value may be double-quoted.
 */
final class ConfigFile {
    private ConfigFile() {
    }

    static Map<String, String> read(Path file, List<String> known) throws IOException {
        Map<String, String> values = new LinkedHashMap<>();
        int n = 0;
        for (String raw : Files.readAllLines(file)) {
            n++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] parts = line.split("\\s+", 2);
            String name = parts[0].toLowerCase(java.util.Locale.ROOT);
            if (!known.contains(name)) {
                throw new IllegalArgumentException(file + ":" + n + ": unknown setting '" + parts[0] + "' (known: "
                        + String.join(", ", known) + ")");
            }
            if (parts.length < 2) {
                throw new IllegalArgumentException(file + ":" + n + ": setting '" + name + "' has no value");
            }
            String value = parts[1].strip();
            if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                value = value.substring(1, value.length() - 1);
            }
            values.put(name, value);
        }
        return values;
    }
}
