package io.kvtier.common;

import java.util.List;

/** Text tables for the command line: rows in aligned columns, two spaces apart, indented by two. Stateless. */
public final class Columns {
    private Columns() {
    }

    /** Appends {@code rows} (the first is usually the header); {@code right[i]}: column i holds numbers, aligned right. */
    public static void append(StringBuilder b, List<String[]> rows, boolean[] right) {
        int[] width = new int[right.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder("  ");
            for (int i = 0; i < row.length; i++) {
                String pad = " ".repeat(width[i] - row[i].length());
                line.append(right[i] ? pad + row[i] : row[i] + pad).append("  ");
            }
            b.append(line.toString().stripTrailing()).append('\n');
        }
    }
}
