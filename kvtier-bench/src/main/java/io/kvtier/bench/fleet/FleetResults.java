package io.kvtier.bench.fleet;

import io.kvtier.common.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads the points of a {@value FleetReport#JSON_FILE} that {@link FleetReport} wrote (schema
 * {@value FleetReport#SCHEMA}), so that the charts of several runs can be drawn together. A member written as null
 * (NaN) reads as NaN. Stateless.
 */
public final class FleetResults {
    private FleetResults() {
    }

    /**
     * The points of one fleet.json, in its order.
     *
     * @throws IOException when the file cannot be read or is not a fleet benchmark's result
     */
    public static List<FleetPoint> read(Path file) throws IOException {
        Object root;
        try {
            root = Json.parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw new IOException(file + " is not JSON: " + e.getMessage(), e);
        }
        if (!(root instanceof Map<?, ?> m) || !FleetReport.SCHEMA.equals(m.get("schema"))) {
            throw new IOException(file + " is not a fleet benchmark result (schema " + FleetReport.SCHEMA + ")");
        }
        List<FleetPoint> points = new ArrayList<>();
        try {
            for (Object p : (List<?>) m.get("points")) {
                points.add(point((Map<?, ?>) p));
            }
        } catch (ClassCastException | NullPointerException e) {
            throw new IOException(file + " has a point without the members a fleet point has: " + e, e);
        }
        return points;
    }

    private static FleetPoint point(Map<?, ?> p) {
        Map<?, ?> l = (Map<?, ?>) p.get("latency");
        Map<?, ?> c = (Map<?, ?>) p.get("counters");
        List<String> errors = ((List<?>) l.get("firstErrors")).stream().map(String::valueOf).toList();
        LatencyStats latency = new LatencyStats(count(l, "ok"), count(l, "errors"), errors, real(l, "ttftP50"),
                real(l, "ttftP90"), real(l, "ttftP99"), real(l, "ttftMean"), real(l, "tpotP50"), real(l, "tpotP90"),
                real(l, "tpotMean"), real(l, "tokensPerSecondPerUser"), real(l, "tokensPerSecondPerUserMedian"),
                real(l, "e2eP50"), real(l, "e2eP90"), count(l, "promptTokens"), count(l, "cachedTokens"),
                count(l, "outputTokens"), real(l, "measuredSeconds"));
        EngineCounters counters = new EngineCounters(count(c, "promptTokens"), count(c, "gpuHitTokens"),
                count(c, "memoryHitTokens"), count(c, "diskHitTokens"), count(c, "recomputedTokens"),
                count(c, "bytesRead"), count(c, "bytesWritten"), count(c, "storesDropped"), count(c, "loadFailures"),
                count(c, "preemptions"), real(c, "gpuBusySeconds"), real(c, "loadSeconds"),
                real(c, "fetchBytesPerSecond"), real(c, "stepLagSeconds"));
        return new FleetPoint((String) p.get("offload"), (String) p.get("routing"), (String) p.get("rateLabel"),
                real(p, "offeredRps"), (int) count(p, "gpus"), latency, counters,
                p.get("timeline") instanceof Map<?, ?> t ? timeline(t) : FleetTimeline.EMPTY,
                p.get("ceiling") instanceof Map<?, ?> k ? new ReuseCeiling(count(k, "promptTokens"),
                        count(k, "reusableTokens")) : ReuseCeiling.NONE);
    }

    private static FleetTimeline timeline(Map<?, ?> t) {
        List<FleetTimeline.Bucket> buckets = new ArrayList<>();
        for (Object o : (List<?>) t.get("buckets")) {
            Map<?, ?> b = (Map<?, ?>) o;
            buckets.add(new FleetTimeline.Bucket(real(b, "startSeconds"), (int) count(b, "ok"),
                    (int) count(b, "errors"), real(b, "ttftP50"), real(b, "ttftP90"), real(b, "ttftMax"),
                    real(b, "cachedShare")));
        }
        return new FleetTimeline(real(t, "bucketSeconds"), buckets, real(t, "killedAtSeconds"),
                (String) t.get("killed"));
    }

    private static long count(Map<?, ?> m, String name) {
        return ((BigDecimal) m.get(name)).longValueExact();
    }

    private static double real(Map<?, ?> m, String name) {
        return m.get(name) instanceof BigDecimal d ? d.doubleValue() : Double.NaN;
    }
}
