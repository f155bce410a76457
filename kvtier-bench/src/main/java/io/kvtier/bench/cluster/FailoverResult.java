package io.kvtier.bench.cluster;

import io.kvtier.bench.report.OpResult;
import io.kvtier.common.chart.ChartFiles;
import java.util.List;

/**
 * What the failover run produced. Immutable.
 *
 * @param data    the counts per time bucket
 * @param events  the cluster's events, earliest first
 * @param summary the figures printed after the run
 * @param load    the timeline's SET and GET rows, as the load generator measured them
 * @param verify  the final read of every key (misses = keys lost), empty when it did not run
 * @param notes   the cluster client's notes and anything that went wrong with the scenario itself
 * @param chart   the timeline chart
 */
public record FailoverResult(TimelineData data, List<TimelineEvent> events, FailoverSummary summary,
        List<OpResult> load, List<OpResult> verify, List<String> notes, ChartFiles chart) {
    public FailoverResult {
        events = List.copyOf(events);
        load = List.copyOf(load);
        verify = List.copyOf(verify);
        notes = List.copyOf(notes);
    }

    /** Wrong bytes anywhere, or a key missing in the final read: acknowledged data was lost or corrupted. */
    public boolean lostOrWrongData() {
        return load.stream().anyMatch(r -> r.wrongBytes() > 0)
                || verify.stream().anyMatch(r -> r.misses() > 0 || r.wrongBytes() > 0);
    }

    /** Successful commands and errors on the timeline, for tests and callers that only want the totals. */
    public long ok() {
        return summary.ok();
    }

    public long errors() {
        return summary.errors();
    }

    public boolean killed() {
        return events.stream().anyMatch(e -> e.kind().equals(TimelineEvent.KILL));
    }
}
