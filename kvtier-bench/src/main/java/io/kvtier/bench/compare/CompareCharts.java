package io.kvtier.bench.compare;

import io.kvtier.bench.chart.Charts;
import io.kvtier.bench.chart.LimitLine;
import io.kvtier.bench.limits.MachineLimitsResult;
import io.kvtier.common.Units;
import io.kvtier.common.chart.ChartFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import org.HdrHistogram.Histogram;

/**
 * Draws a comparison's charts: setget throughput vs value size per (op, connections) with the loopback limit,
 * the GET latency CDF of the case nearest 1 MiB at the most connections (16 by default), and overflow hit rate vs
 * working set / memory cap. A chart with nothing to plot is skipped. Stateless.
 */
public final class CompareCharts {
    static final long CDF_SIZE = 1 << 20;

    private CompareCharts() {
    }

    public static List<ChartFiles> write(Path dir, List<Comparison> comparisons,
            Optional<MachineLimitsResult> limits) throws IOException {
        List<ChartFiles> files = new ArrayList<>();
        List<LimitLine> lines = limits.map(l -> List.of(new LimitLine("loopback TCP, 1 stream",
                l.loopbackOneStreamBytesPerSecond() / 1e9))).orElse(List.of());
        TreeSet<Integer> connections = new TreeSet<>();
        comparisons.forEach(c -> connections.add(c.key().connections()));
        for (String op : List.of("SET", "GET")) {
            for (int conns : connections) {
                List<Comparison> cases = select(comparisons, c -> c.key().workload().equals("setget")
                        && c.key().op().equals(op) && c.key().connections() == conns);
                if (!cases.isEmpty()) {
                    files.add(Charts.throughputVsValueSize(dir.resolve("throughput-" + op.toLowerCase() + "-c"
                                    + conns), "setget " + op + " throughput, " + conns + " connections",
                            bySize(cases), lines));
                }
            }
        }
        Optional<ChartFiles> cdf = latencyCdf(dir, comparisons);
        cdf.ifPresent(files::add);
        List<Comparison> overflow = select(comparisons, c -> c.key().isOverflow() && c.key().op().equals("GET"));
        if (!overflow.isEmpty()) {
            files.add(Charts.hitRateVsWorkingSet(dir.resolve("hit-rate-overflow"),
                    "overflow GET hit rate, " + Units.bytes(overflow.getFirst().key().valueSize()) + " values",
                    byFactor(overflow)));
        }
        return files;
    }

    private static Optional<ChartFiles> latencyCdf(Path dir, List<Comparison> comparisons) throws IOException {
        Optional<Comparison> pick = cdfCase(comparisons);
        if (pick.isEmpty()) {
            return Optional.empty();
        }
        Comparison c = pick.get();
        Map<String, Histogram> bySystem = new LinkedHashMap<>();
        bySystem.put(Server.KVTIER.label(), c.kvtier().histogram());
        bySystem.put(Server.REDIS.label(), c.redis().histogram());
        String size = Units.bytes(c.key().valueSize());
        return Optional.of(Charts.latencyCdfOfHistograms(dir.resolve("latency-get-" + size.replace(" ", "")
                        + "-c" + c.key().connections()), "setget GET latency, " + size + ", "
                        + c.key().connections() + " connections", bySystem, TimeUnit.MICROSECONDS));
    }

    /** The setget GET case with both histograms, nearest 1 MiB, then with the most connections. */
    static Optional<Comparison> cdfCase(List<Comparison> comparisons) {
        return select(comparisons, c -> c.key().workload().equals("setget") && c.key().op().equals("GET")
                && hasLatencies(c.kvtier()) && hasLatencies(c.redis())).stream()
                .min(Comparator.<Comparison>comparingDouble(c -> Math.abs(Math.log((double) c.key().valueSize()
                        / CDF_SIZE))).thenComparing(c -> -c.key().connections()));
    }

    private static boolean hasLatencies(Measurement m) {
        return m.histogram() != null && m.histogram().getTotalCount() > 0;
    }

    private static List<Comparison> select(List<Comparison> all, Predicate<Comparison> filter) {
        return all.stream().filter(filter).toList();
    }

    private static Map<String, SortedMap<Long, Double>> bySize(List<Comparison> cases) {
        return bySystem(cases, c -> c.key().valueSize(), m -> m.mbPerSec() / 1000);
    }

    private static Map<String, SortedMap<Double, Double>> byFactor(List<Comparison> cases) {
        return bySystem(cases, c -> c.key().factor(), Measurement::hitRate);
    }

    private static <K extends Comparable<K>> Map<String, SortedMap<K, Double>> bySystem(List<Comparison> cases,
            Function<Comparison, K> x, Function<Measurement, Double> y) {
        Map<String, SortedMap<K, Double>> out = new LinkedHashMap<>();
        out.put(Server.KVTIER.label(), new TreeMap<>());
        out.put(Server.REDIS.label(), new TreeMap<>());
        for (Comparison c : cases) {
            out.get(Server.KVTIER.label()).put(x.apply(c), y.apply(c.kvtier()));
            out.get(Server.REDIS.label()).put(x.apply(c), y.apply(c.redis()));
        }
        return out;
    }
}
