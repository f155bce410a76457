package io.kvtier.cluster.node;

import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/**
 * How far this node's rebalancing has come: the background import of the slots it took over at one slot-table epoch,
 * for CLUSTER INFO and {@code /metrics}. Written by the importer thread only, which publishes every change as one
 * immutable record through a volatile field; read by any thread. Keys and bytes copied count every transferred value
 * since the import began, the on-demand fetches of commands included, so they are read from the node's counters.
 */
public final class ImportProgress {
    /** Where an import stands. */
    public enum Phase {
        /** Nothing imported since this node started. */
        IDLE,
        /** Asking the other members which of them holds each slot's freshest copy. */
        WAITING,
        COPYING,
        DONE,
        /** A newer table arrived before this import finished; the next one starts from that table. */
        SUPERSEDED;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One reading.
     *
     * @param epoch           the table whose slots are imported (0 when idle)
     * @param slots           slots this node had to import at that epoch
     * @param slotsCopied     of those, slots whose first copy pass is through (or that had nothing to copy)
     * @param slotsDone       slots complete: both passes through, served without fetching
     * @param sources         members copied from (each slot from the one holding its freshest copy)
     * @param pass            1 or 2 while copying: the second pass catches writes in flight on the old owners
     * @param keysListed      keys the sources listed so far, in both passes (each is copied unless already here)
     * @param keys            values copied into this node
     * @param bytes           their bytes
     * @param startedAtMillis wall-clock start, Unix milliseconds (0 when idle)
     * @param elapsedMillis   from start to now, or to the end
     */
    public record Status(Phase phase, long epoch, int slots, int slotsCopied, int slotsDone, int sources, int pass,
                         long keysListed, long keys, long bytes, long startedAtMillis, long elapsedMillis) {
    }

    /** What the importer last published; keys and bytes are node counters minus the bases, frozen at the end. */
    private record Round(Phase phase, long epoch, int slots, int slotsCopied, int slotsDone, int sources, int pass,
                         long keysListed, long keysBase, long bytesBase, long keysEnd, long bytesEnd,
                         long startedAtMillis, long startNanos, long endNanos) {
        Round with(Phase p, int copied, int done, int src, int ps, long listed) {
            return new Round(p, epoch, slots, copied, done, src, ps, listed, keysBase, bytesBase, keysEnd, bytesEnd,
                    startedAtMillis, startNanos, endNanos);
        }
    }

    private final LongAdder keysCopied;
    private final LongAdder bytesCopied;
    private volatile Round round;

    /** Progress reading {@code keysCopied} and {@code bytesCopied}, the node's counters of transferred values. */
    ImportProgress(LongAdder keysCopied, LongAdder bytesCopied) {
        this.keysCopied = keysCopied;
        this.bytesCopied = bytesCopied;
    }

    /**
     * An import round at {@code epoch} starts with {@code slots} to import. A retry at the same epoch keeps the start
     * time, the counts of copied values and of completed slots, and starts the passes (and the listing) over.
     */
    void begin(long epoch, int slots) {
        Round r = round;
        if (r != null && r.epoch() == epoch && r.phase() != Phase.SUPERSEDED) {
            round = r.with(Phase.WAITING, r.slotsDone(), r.slotsDone(), 0, 0, 0);
            return;
        }
        round = new Round(Phase.WAITING, epoch, slots, 0, 0, 0, 0, 0, keysCopied.sum(), bytesCopied.sum(), -1, -1,
                System.currentTimeMillis(), System.nanoTime(), 0);
    }

    /** The sources are known; copying starts. */
    void copying(int sources) {
        Round r = round;
        round = r.with(Phase.COPYING, r.slotsCopied(), r.slotsDone(), sources, 1, r.keysListed());
    }

    void pass(int pass) {
        Round r = round;
        round = r.with(r.phase(), r.slotsCopied(), r.slotsDone(), r.sources(), pass, r.keysListed());
    }

    /** {@code n} more keys were listed by a source. */
    void listed(int n) {
        Round r = round;
        round = r.with(r.phase(), r.slotsCopied(), r.slotsDone(), r.sources(), r.pass(), r.keysListed() + n);
    }

    /** The first pass over {@code n} more slots is through. */
    void slotsCopied(int n) {
        Round r = round;
        round = r.with(r.phase(), Math.min(r.slots(), r.slotsCopied() + n), r.slotsDone(), r.sources(), r.pass(),
                r.keysListed());
    }

    /** {@code n} more slots are complete without copying (no other member ever held them completely). */
    void slotsDone(int n) {
        Round r = round;
        round = r.with(r.phase(), Math.min(r.slots(), r.slotsCopied() + n), Math.min(r.slots(), r.slotsDone() + n),
                r.sources(), r.pass(), r.keysListed());
    }

    /** Every slot of the round is complete. */
    void finished() {
        end(Phase.DONE, round.slots());
    }

    /** The table changed under the round. */
    void superseded() {
        end(Phase.SUPERSEDED, round.slotsDone());
    }

    private void end(Phase phase, int done) {
        Round r = round;
        round = new Round(phase, r.epoch(), r.slots(), phase == Phase.DONE ? r.slots() : r.slotsCopied(), done,
                r.sources(), 0, r.keysListed(), r.keysBase(), r.bytesBase(), keysCopied.sum(), bytesCopied.sum(),
                r.startedAtMillis(), r.startNanos(), System.nanoTime());
    }

    /** The latest reading; any thread. */
    public Status status() {
        Round r = round;
        if (r == null) {
            return new Status(Phase.IDLE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        }
        boolean ended = r.endNanos() != 0;
        long keys = (ended ? r.keysEnd() : keysCopied.sum()) - r.keysBase();
        long bytes = (ended ? r.bytesEnd() : bytesCopied.sum()) - r.bytesBase();
        long elapsed = ((ended ? r.endNanos() : System.nanoTime()) - r.startNanos()) / 1_000_000;
        return new Status(r.phase(), r.epoch(), r.slots(), r.slotsCopied(), r.slotsDone(), r.sources(), r.pass(),
                r.keysListed(), Math.max(0, keys), Math.max(0, bytes), r.startedAtMillis(), elapsed);
    }
}
