package io.kvtier.bench.report;

import io.kvtier.common.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes a {@link BenchResult} as JSON and reads it back. Stateless and thread-safe. The schema
 * ({@value #SCHEMA}), one file per run, one object in {@code results} per (workload, valueSize, op):
 *
 * <pre>{@code
 * {
 *   "schema": "kvtier-bench/1",
 *   "run": {
 *     "startedAt": "2026-11-22T10:15:30Z",   // ISO-8601 instant
 *     "target": "127.0.0.1:6379",
 *     "workload": "setget",                  // setget | lmcache | overflow
 *     "connections": 4,
 *     "pipeline": 1,                         // requests in flight per connection
 *     "loop": "closed",                      // closed | open
 *     "rate": null,                          // requests/s of the open-loop schedule; null when closed
 *     "verify": false,
 *     "seed": 1,
 *     "latency": "closed loop (...): latencies are service times ...",
 *     "parameters": {"valueSizes": "1 MiB", "limit": "10s", ...}   // strings, workload-specific
 *   },
 *   "results": [
 *     {
 *       "workload": "setget", "valueSize": 1048576, "op": "GET",
 *       "count": 5000,          // completed operations, misses and errors included
 *       "seconds": 10.02,       // length of the phase
 *       "opsPerSec": 499.0,     // derived: count / seconds
 *       "mbPerSec": 523.2,      // derived: bytes / seconds / 10^6
 *       "bytes": 5242880000,    // value bytes moved (sent for SET, received for GET, both for "request")
 *       "hits": 5000, "misses": 0,
 *       "hitRate": 1.0,         // derived: hits / (hits + misses); null when neither (SET)
 *       "errors": 0, "wrongBytes": 0,
 *       "firstError": null,     // text of the first error, or null
 *       "latencyMs": {"p50": 1.9, "p90": 2.4, "p99": 3.1, "p999": 7.8, "max": 9.2, "mean": 2.0},
 *                               // null members when nothing succeeded
 *       "histogram": "HISTFAAA..."   // Base64 compressed HdrHistogram (V2) of the latencies in microseconds
 *     }
 *   ]
 * }
 * }</pre>
 * Readers ignore the derived members and any member they do not know, so later versions may add members.
 */
public final class BenchResultJson {
    public static final String SCHEMA = "kvtier-bench/1";

    private BenchResultJson() {
    }

    public static String toJson(BenchResult result) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("schema", SCHEMA);
        root.put("run", run(result.run()));
        root.put("results", result.results().stream().map(BenchResultJson::op).toList());
        return Json.write(root);
    }

    public static void write(BenchResult result, Path file) throws IOException {
        Files.writeString(file, toJson(result), StandardCharsets.UTF_8);
    }

    public static BenchResult read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8));
    }

    /** Parses a result; throws IllegalArgumentException naming the member that is missing or malformed. */
    public static BenchResult parse(String json) {
        Map<String, Object> root = object(Json.parse(json), "root");
        String schema = string(root, "schema");
        if (!SCHEMA.equals(schema)) {
            throw new IllegalArgumentException("unknown schema '" + schema + "', expected " + SCHEMA);
        }
        RunInfo run = run(object(root.get("run"), "run"));
        List<OpResult> ops = list(root.get("results"), "results").stream()
                .map(o -> op(object(o, "results[]"))).toList();
        return new BenchResult(run, ops);
    }

    private static Map<String, Object> run(RunInfo run) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("startedAt", run.startedAt());
        m.put("target", run.target());
        m.put("workload", run.workload());
        m.put("connections", run.connections());
        m.put("pipeline", run.pipeline());
        m.put("loop", run.openLoop() ? "open" : "closed");
        m.put("rate", run.rate());
        m.put("verify", run.verify());
        m.put("seed", run.seed());
        m.put("latency", run.latency());
        m.put("parameters", new LinkedHashMap<>(new TreeMap<>(run.parameters())));
        return m;
    }

    private static RunInfo run(Map<String, Object> m) {
        Map<String, Object> params = object(m.get("parameters"), "run.parameters");
        Map<String, String> parameters = new LinkedHashMap<>();
        params.forEach((k, v) -> parameters.put(k, String.valueOf(v)));
        return new RunInfo(string(m, "startedAt"), string(m, "target"), string(m, "workload"),
                (int) number(m, "connections"), (int) number(m, "pipeline"), decimal(m, "rate"),
                bool(m, "verify"), number(m, "seed"), string(m, "latency"), parameters);
    }

    private static Map<String, Object> op(OpResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("workload", r.workload());
        m.put("valueSize", r.valueSize());
        m.put("op", r.op());
        m.put("count", r.count());
        m.put("seconds", r.seconds());
        m.put("opsPerSec", r.opsPerSec());
        m.put("mbPerSec", r.mbPerSec());
        m.put("bytes", r.bytes());
        m.put("hits", r.hits());
        m.put("misses", r.misses());
        m.put("hitRate", r.hitRate());
        m.put("errors", r.errors());
        m.put("wrongBytes", r.wrongBytes());
        m.put("firstError", r.firstError().isEmpty() ? null : r.firstError());
        LatencySummary l = r.latencyMs();
        Map<String, Object> latency = new LinkedHashMap<>();
        latency.put("p50", l.p50());
        latency.put("p90", l.p90());
        latency.put("p99", l.p99());
        latency.put("p999", l.p999());
        latency.put("max", l.max());
        latency.put("mean", l.mean());
        m.put("latencyMs", latency);
        m.put("histogram", r.histogram());
        return m;
    }

    private static OpResult op(Map<String, Object> m) {
        Map<String, Object> l = object(m.get("latencyMs"), "latencyMs");
        LatencySummary latency = new LatencySummary(decimal(l, "p50"), decimal(l, "p90"), decimal(l, "p99"),
                decimal(l, "p999"), decimal(l, "max"), decimal(l, "mean"));
        Object firstError = m.get("firstError");
        return new OpResult(string(m, "workload"), number(m, "valueSize"), string(m, "op"), number(m, "count"),
                decimal(m, "seconds"), number(m, "bytes"), number(m, "hits"), number(m, "misses"),
                number(m, "errors"), number(m, "wrongBytes"), firstError == null ? "" : firstError.toString(),
                latency, m.get("histogram") == null ? "" : string(m, "histogram"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object value, String where) {
        if (value instanceof Map<?, ?> map) {
            return (Map<String, Object>) map;
        }
        throw new IllegalArgumentException(where + " is not a JSON object");
    }

    private static List<?> list(Object value, String where) {
        if (value instanceof List<?> list) {
            return list;
        }
        throw new IllegalArgumentException(where + " is not a JSON array");
    }

    private static String string(Map<String, Object> m, String name) {
        if (m.get(name) instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException("member '" + name + "' is missing or not a string");
    }

    private static boolean bool(Map<String, Object> m, String name) {
        if (m.get(name) instanceof Boolean b) {
            return b;
        }
        throw new IllegalArgumentException("member '" + name + "' is missing or not a boolean");
    }

    private static long number(Map<String, Object> m, String name) {
        if (m.get(name) instanceof BigDecimal d) {
            try {
                return d.longValueExact();
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("member '" + name + "' is not an integer: " + d);
            }
        }
        throw new IllegalArgumentException("member '" + name + "' is missing or not a number");
    }

    /** A number, or NaN where the writer wrote null (NaN, or nothing to measure). */
    private static double decimal(Map<String, Object> m, String name) {
        Object v = m.get(name);
        if (v == null && m.containsKey(name)) {
            return Double.NaN;
        }
        if (v instanceof BigDecimal d) {
            return d.doubleValue();
        }
        throw new IllegalArgumentException("member '" + name + "' is missing or not a number");
    }
}
