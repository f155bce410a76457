package io.kvtier.bench.cluster;

import io.kvtier.bench.report.OpResult;
import io.kvtier.common.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes the failover run as {@code failover.csv} (one row per time bucket) and {@code failover.json} (options,
 * summary, events, the load's per-operation results, the final read of every key, the cluster client's notes and every
 * bucket). Stateless.
 */
final class FailoverReport {
    static final String SCHEMA = "kvtier-bench-cluster-failover/1";
    static final String CSV_HEADER = "seconds,readsOk,writesOk,readErrors,writeErrors,opsPerSec,errorsPerSec,"
            + "deadNodeKeysOk,maxLatencyMs";

    private FailoverReport() {
    }

    static String toCsv(TimelineData data) {
        StringBuilder out = new StringBuilder(CSV_HEADER).append('\n');
        for (int b = 0; b < data.buckets(); b++) {
            out.append(String.format(Locale.ROOT, "%.3f,%d,%d,%d,%d,%.1f,%.1f,%d,%.3f%n", data.startSeconds(b),
                    data.get(TimelineData.READS_OK, b), data.get(TimelineData.WRITES_OK, b),
                    data.get(TimelineData.READ_ERRORS, b), data.get(TimelineData.WRITE_ERRORS, b),
                    data.perSecond(data.ok(b)), data.perSecond(data.errors(b)), data.get(TimelineData.VICTIM_OK, b),
                    data.get(TimelineData.MAX_LATENCY_NANOS, b) / 1e6));
        }
        return out.toString();
    }

    static String toJson(FailoverResult r, Map<String, String> options) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("schema", SCHEMA);
        root.put("options", options);
        root.put("summary", r.summary().toMap());
        root.put("errorKinds", r.data().errorKinds());
        root.put("events", r.events().stream().map(e -> Map.of("seconds", e.seconds(), "kind", e.kind(),
                "label", e.label())).toList());
        root.put("load", r.load().stream().map(FailoverReport::op).toList());
        root.put("verify", r.verify().stream().map(FailoverReport::op).toList());
        root.put("notes", r.notes());
        root.put("bucketSeconds", r.data().bucketSeconds());
        List<Map<String, Object>> buckets = new ArrayList<>();
        TimelineData d = r.data();
        for (int b = 0; b < d.buckets(); b++) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("seconds", d.startSeconds(b));
            m.put("readsOk", d.get(TimelineData.READS_OK, b));
            m.put("writesOk", d.get(TimelineData.WRITES_OK, b));
            m.put("readErrors", d.get(TimelineData.READ_ERRORS, b));
            m.put("writeErrors", d.get(TimelineData.WRITE_ERRORS, b));
            m.put("deadNodeKeysOk", d.get(TimelineData.VICTIM_OK, b));
            m.put("maxLatencyMs", d.get(TimelineData.MAX_LATENCY_NANOS, b) / 1e6);
            buckets.add(m);
        }
        root.put("buckets", buckets);
        return Json.write(root);
    }

    private static Map<String, Object> op(OpResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", r.op());
        m.put("count", r.count());
        m.put("opsPerSec", r.opsPerSec());
        m.put("mbPerSec", r.mbPerSec());
        m.put("hits", r.hits());
        m.put("misses", r.misses());
        m.put("errors", r.errors());
        m.put("wrongBytes", r.wrongBytes());
        m.put("p50Ms", r.latencyMs().p50());
        m.put("p99Ms", r.latencyMs().p99());
        m.put("maxMs", r.latencyMs().max());
        m.put("firstError", r.firstError());
        return m;
    }

    static void write(Path dir, FailoverResult r, Map<String, String> options) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("failover.csv"), toCsv(r.data()), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("failover.json"), toJson(r, options), StandardCharsets.UTF_8);
    }
}
