package io.kvtier.bench.compare;

import io.kvtier.bench.limits.MachineLimitsResult;
import io.kvtier.bench.report.BenchResultJson;
import io.kvtier.common.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Writes a comparison as {@code compare.json} (the options, the machine limits, every pass's full
 * {@link io.kvtier.bench.report.BenchResult} and the ratios) and {@code compare.csv} (one row per case). Stateless.
 */
public final class CompareReport {
    public static final String SCHEMA = "kvtier-bench-compare/1";
    public static final String CSV_HEADER = "workload,valueSize,op,connections,factor,kvtierMbPerSec,redisMbPerSec,"
            + "throughputRatio,kvtierP99Ms,redisP99Ms,p99Ratio,kvtierHitRate,redisHitRate,hitRateRatio,limit,"
            + "limitBytesPerSec,kvtierPercentOfLimit";

    private CompareReport() {
    }

    public static String toJson(Map<String, String> options, Optional<MachineLimitsResult> limits,
            List<Pass> passes, List<Comparison> comparisons) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("schema", SCHEMA);
        root.put("options", options);
        root.put("limits", limits.map(l -> Json.parse(l.toJson())).orElse(null));
        root.put("comparisons", comparisons.stream().map(c -> comparison(c, limits)).toList());
        root.put("passes", passes.stream().map(CompareReport::pass).toList());
        return Json.write(root);
    }

    private static Map<String, Object> comparison(Comparison c, Optional<MachineLimitsResult> limits) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", c.key().workload());
        m.put("valueSize", c.key().valueSize());
        m.put("op", c.key().op());
        m.put("connections", c.key().connections());
        m.put("factor", c.key().factor());
        m.put("kvtier", measurement(c.kvtier()));
        m.put("redis", measurement(c.redis()));
        m.put("ratios", Map.of("mbPerSec", c.throughputRatio(), "p99", c.p99Ratio(), "hitRate", c.hitRateRatio()));
        limits.flatMap(c::limit).ifPresent(l -> {
            m.put("limit", Map.of("name", l.name(), "bytesPerSecond", l.bytesPerSecond()));
            m.put("kvtierPercentOfLimit", c.kvtierPercentOf(l));
        });
        return m;
    }

    private static Map<String, Object> measurement(Measurement x) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("rounds", x.rounds());
        m.put("mbPerSec", x.mbPerSec());
        m.put("p99Ms", x.p99Ms());
        m.put("hitRate", x.hitRate());
        m.put("errors", x.errors());
        return m;
    }

    private static Map<String, Object> pass(Pass p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("system", p.server().label());
        m.put("round", p.round());
        m.put("connections", p.connections());
        m.put("factor", p.factor());
        m.put("result", Json.parse(BenchResultJson.toJson(p.result())));
        return m;
    }

    public static String toCsv(List<Comparison> comparisons, Optional<MachineLimitsResult> limits) {
        StringBuilder out = new StringBuilder(CSV_HEADER).append('\n');
        for (Comparison c : comparisons) {
            CaseKey k = c.key();
            Optional<Comparison.Limit> limit = limits.flatMap(c::limit);
            out.append(String.join(",", k.workload(), Long.toString(k.valueSize()), k.op(),
                    Integer.toString(k.connections()), num(k.factor()), num(c.kvtier().mbPerSec()),
                    num(c.redis().mbPerSec()), num(c.throughputRatio()), num(c.kvtier().p99Ms()),
                    num(c.redis().p99Ms()), num(c.p99Ratio()), num(c.kvtier().hitRate()), num(c.redis().hitRate()),
                    num(c.hitRateRatio()), limit.map(Comparison.Limit::name).orElse(""),
                    limit.map(l -> Long.toString(l.bytesPerSecond())).orElse(""),
                    limit.map(l -> num(c.kvtierPercentOf(l))).orElse(""))).append('\n');
        }
        return out.toString();
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.4f", v);
    }

    public static void write(Path dir, Map<String, String> options, Optional<MachineLimitsResult> limits,
            List<Pass> passes, List<Comparison> comparisons) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("compare.json"), toJson(options, limits, passes, comparisons),
                StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("compare.csv"), toCsv(comparisons, limits), StandardCharsets.UTF_8);
    }
}
