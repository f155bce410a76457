package io.kvtier.router.events;

import java.util.List;

/**
 * The payload of one message of an engine's event stream: the events of one scheduler step, stamped with the engine's
 * wall clock ({@code ts}, seconds) and its data-parallel rank (null where vLLM predates it).
 */
public record KvEventBatch(double ts, List<KvEvent> events, Long dataParallelRank) {
    public KvEventBatch {
        events = List.copyOf(events);
    }
}
