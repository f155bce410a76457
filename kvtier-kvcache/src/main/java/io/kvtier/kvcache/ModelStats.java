package io.kvtier.kvcache;

import java.util.concurrent.atomic.LongAdder;

/** Live counters of one model's KV-cache in this node's store. Lock-free. */
final class ModelStats {
    final String model;
    final LongAdder chunks = new LongAdder();
    final LongAdder keys = new LongAdder();
    final LongAdder bytes = new LongAdder();
    final LongAdder memoryHits = new LongAdder();
    final LongAdder diskHits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder lostChunks = new LongAdder();

    ModelStats(String model) {
        this.model = model;
    }

    ModelSnapshot snapshot() {
        return new ModelSnapshot(model, chunks.sum(), keys.sum(), bytes.sum(), memoryHits.sum(), diskHits.sum(),
                misses.sum(), lostChunks.sum());
    }
}
