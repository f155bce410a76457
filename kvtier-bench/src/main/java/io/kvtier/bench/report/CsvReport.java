package io.kvtier.bench.report;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a {@link BenchResult}'s rows as CSV: one header line, then one line per (workload, valueSize, op), with
 * the members of the JSON schema ({@link BenchResultJson}) flattened and without the histogram; empty cells where
 * JSON has null. Stateless and thread-safe.
 */
public final class CsvReport {
    public static final String HEADER = "workload,valueSize,op,count,seconds,opsPerSec,mbPerSec,bytes,hits,misses,"
            + "hitRate,errors,wrongBytes,p50Ms,p90Ms,p99Ms,p999Ms,maxMs,meanMs,firstError";

    private CsvReport() {
    }

    public static String toCsv(BenchResult result) {
        StringBuilder out = new StringBuilder(HEADER).append('\n');
        for (OpResult r : result.results()) {
            LatencySummary l = r.latencyMs();
            out.append(String.join(",", cell(r.workload()), Long.toString(r.valueSize()), cell(r.op()),
                    Long.toString(r.count()), number(r.seconds()), number(r.opsPerSec()), number(r.mbPerSec()),
                    Long.toString(r.bytes()), Long.toString(r.hits()), Long.toString(r.misses()),
                    number(r.hitRate()), Long.toString(r.errors()), Long.toString(r.wrongBytes()), number(l.p50()),
                    number(l.p90()), number(l.p99()), number(l.p999()), number(l.max()), number(l.mean()),
                    cell(r.firstError()))).append('\n');
        }
        return out.toString();
    }

    public static void write(BenchResult result, Path file) throws IOException {
        Files.writeString(file, toCsv(result), StandardCharsets.UTF_8);
    }

    private static String number(double d) {
        if (Double.isNaN(d) || Double.isInfinite(d)) {
            return "";
        }
        return new BigDecimal(d).round(new MathContext(6)).stripTrailingZeros().toPlainString();
    }

    /** RFC 4180 quoting when a cell holds a comma, quote or line break. */
    public static String cell(String s) {
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0) {
            return s;
        }
        return '"' + s.replace("\"", "\"\"") + '"';
    }
}
