package io.kvtier.bench.cluster;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The failover run in figures: when things happened relative to the kill and the join, the errors around each, and
 * throughput before, between and after. Times in seconds; NaN where the event never happened (a run too short to
 * see the join settle, say). Immutable.
 *
 * @param killAt                 when n2 was killed
 * @param viewChangeAfterKill    until the watched node first showed a new table
 * @param rebalancedAfterKill    until every node served that table (or a later one) with nothing left to import
 * @param victimKeysServedAfter  until a command sent after the kill first succeeded on a key n2 was primary of
 * @param errorsStoppedAfterKill until the last error before the join (0 when there was none)
 * @param errorsAfterKill        errors from the kill to the join
 * @param joinAt                 when the new node was started
 * @param joinViewAfter          until the watched node first showed a table with the new node
 * @param rebalancedAfterJoin    until every node served that table (or a later one) with nothing left to import
 * @param errorsAfterJoin        errors from the join to the end
 * @param ok                     successful commands on the timeline
 * @param errors                 failed commands on the timeline
 * @param maxLatencyMs           the longest command, successful or not
 * @param opsBeforeKill          successful ops/s in the 5 s before the kill
 * @param opsKillToJoin          successful ops/s from the kill to the join
 * @param opsLast5s              successful ops/s in the last 5 s
 */
public record FailoverSummary(double killAt, double viewChangeAfterKill, double rebalancedAfterKill,
        double victimKeysServedAfter,
        double errorsStoppedAfterKill, long errorsAfterKill, double joinAt, double joinViewAfter,
        double rebalancedAfterJoin, long errorsAfterJoin, long ok, long errors, double maxLatencyMs,
        double opsBeforeKill, double opsKillToJoin, double opsLast5s) {

    static FailoverSummary of(TimelineData data, List<TimelineEvent> events, double lengthSeconds) {
        double kill = first(events, TimelineEvent.KILL, Double.NEGATIVE_INFINITY).orElse(Double.NaN);
        double join = first(events, TimelineEvent.JOIN, Double.NEGATIVE_INFINITY).orElse(lengthSeconds);
        double lastError = data.lastErrorBetween(kill, join);
        long ok = data.total(TimelineData.READS_OK) + data.total(TimelineData.WRITES_OK);
        double killView = after(events, TimelineEvent.VIEW, kill);
        double joinView = after(events, TimelineEvent.VIEW, join);
        return new FailoverSummary(kill, killView, settled(events, kill, killView),
                data.firstVictimOkNanos() < 0 ? Double.NaN : data.firstVictimOkNanos() / 1e9 - kill,
                Double.isNaN(lastError) ? 0 : Math.max(0, lastError - kill), data.errorsBetween(kill, join), join,
                joinView, settled(events, join, joinView),
                data.errorsBetween(join, Double.POSITIVE_INFINITY), ok, data.totalErrors(), data.maxLatencyMillis(),
                data.meanOpsPerSecond(Math.max(0, kill - 5), kill), data.meanOpsPerSecond(kill, join),
                data.meanOpsPerSecond(lengthSeconds - 5, lengthSeconds));
    }

    private static Optional<Double> first(List<TimelineEvent> events, String kind, double after) {
        return events.stream().filter(e -> e.kind().equals(kind) && e.seconds() > after)
                .map(TimelineEvent::seconds).min(Double::compare);
    }

    /** From {@code from} to the first "rebalanced" after the table change {@code view} seconds later. */
    private static double settled(List<TimelineEvent> events, double from, double view) {
        return Double.isNaN(view) ? Double.NaN : first(events, TimelineEvent.REBALANCED, from + view - 1e-9)
                .map(t -> t - from).orElse(Double.NaN);
    }

    private static double after(List<TimelineEvent> events, String kind, double from) {
        return Double.isNaN(from) ? Double.NaN : first(events, kind, from).map(t -> t - from).orElse(Double.NaN);
    }

    /** The lines printed after the run. */
    List<String> lines() {
        return List.of(
                f("kill -9 n2 at %.1f s, then: new table on the watched node %s, n2's keys served again %s"
                        + " (first success of a command sent after the kill), errors stopped %s (%d errors"
                        + " from the kill to the join), rebalanced %s", killAt, s(viewChangeAfterKill),
                        s(victimKeysServedAfter), s(errorsStoppedAfterKill), errorsAfterKill, s(rebalancedAfterKill)),
                f("join started at %.1f s, then: new table %s, rebalanced (nothing left to import anywhere) %s;"
                        + " %d errors from the join to the end", joinAt, s(joinViewAfter), s(rebalancedAfterJoin),
                        errorsAfterJoin),
                f("ops/s: %.0f in the 5 s before the kill, %.0f from the kill to the join, %.0f in the last 5 s;"
                        + " %d ok, %d errors in all; longest command %.0f ms", opsBeforeKill, opsKillToJoin,
                        opsLast5s, ok, errors, maxLatencyMs));
    }

    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("killAtSeconds", killAt);
        m.put("viewChangeAfterKillSeconds", viewChangeAfterKill);
        m.put("rebalancedAfterKillSeconds", rebalancedAfterKill);
        m.put("victimKeysServedAfterKillSeconds", victimKeysServedAfter);
        m.put("errorsStoppedAfterKillSeconds", errorsStoppedAfterKill);
        m.put("errorsKillToJoin", errorsAfterKill);
        m.put("joinAtSeconds", joinAt);
        m.put("joinViewAfterSeconds", joinViewAfter);
        m.put("rebalancedAfterJoinSeconds", rebalancedAfterJoin);
        m.put("errorsAfterJoin", errorsAfterJoin);
        m.put("ok", ok);
        m.put("errors", errors);
        m.put("maxLatencyMs", maxLatencyMs);
        m.put("opsPerSecBeforeKill", opsBeforeKill);
        m.put("opsPerSecKillToJoin", opsKillToJoin);
        m.put("opsPerSecLast5s", opsLast5s);
        return m;
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }

    private static String s(double seconds) {
        return Double.isNaN(seconds) ? "never" : String.format(Locale.ROOT, "+%.2f s", seconds);
    }
}
