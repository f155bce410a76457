package io.kvtier.cluster.node;

import io.kvtier.client.Reply;
import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.error.TryAgainException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * State transfer into this node: the background copy of every importing slot from its freshest holder, and the
 * on-demand fetch of single keys that commands touch meanwhile. One thread; at most one value in flight per call,
 * paced to {@code --rebalance-rate}; it reports how far it has come to {@link ImportProgress}. See
 * {@link ClusterNode} for the rules that keep newer local writes winning.
 */
final class Importer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Importer.class);
    static final int SCAN_BATCH = 256;

    private final ClusterNode node;
    private final Thread thread;
    private final Object signal = new Object();
    private final ConcurrentHashMap<ClusterNode.ByteKey, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();
    /** Per slot, the holder the last SLOTINFO round found freshest (null: unknown), for on-demand fetches. */
    private volatile Member[] freshest = new Member[SlotHash.SLOTS];
    private volatile boolean closed;
    private boolean woken;
    private long pacedBytes;
    private long pacedSince = System.nanoTime();

    Importer(ClusterNode node) {
        this.node = node;
        this.thread = Thread.ofPlatform().name("kvtier-import").daemon().unstarted(this::run);
    }

    void start() {
        thread.start();
    }

    /** Forgets the freshest holders found so far (a new table: some may be gone). */
    void forgetHolders() {
        freshest = new Member[SlotHash.SLOTS];
    }

    void wake() {
        synchronized (signal) {
            woken = true;
            signal.notifyAll();
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
    }

    private long timeoutMillis() {
        return node.settings().peerTimeout().toMillis();
    }

    /**
     * Brings {@code key} here if its freshest holder has it. {@code from} is that holder when the caller knows it (the
     * background copy); otherwise every other member is asked for its lastComplete epoch of the slot and whether it has
     * the key, and the value is taken from the freshest. Concurrent fetches of one key share one attempt.
     */
    CompletableFuture<Void> fetch(byte[] key, Member from) {
        ClusterNode.ByteKey k = new ClusterNode.ByteKey(key);
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> running = inFlight.putIfAbsent(k, mine);
        if (running != null) {
            return running;
        }
        Member cached = from != null ? null : freshest[SlotHash.slot(key)];
        Member source = from != null ? from : cached;
        CompletableFuture<Member> holder = source != null ? CompletableFuture.completedFuture(source) : findHolder(key);
        CompletableFuture<Void> copied = holder.thenCompose(h -> h == null ? CompletableFuture.<Void>completedFuture(null)
                : copyFrom(h, key));
        if (cached != null) { // the cached holder may have died since: ask everyone instead
            copied = copied.exceptionallyCompose(e -> findHolder(key).thenCompose(h -> h == null
                    ? CompletableFuture.<Void>completedFuture(null) : copyFrom(h, key)));
        }
        copied.whenComplete((v, e) -> {
                    inFlight.remove(k, mine);
                    if (e != null) {
                        mine.completeExceptionally(e);
                    } else {
                        mine.complete(null);
                    }
                });
        return mine;
    }

    /**
     * Asks every other member about {@code key}; the freshest holder if it has the key, else null. Fails (TRYAGAIN)
     * unless every member answered.
     */
    private CompletableFuture<Member> findHolder(byte[] key) {
        ClusterNode.Sources sources = node.sources();
        List<Member> others = sources.all();
        int required = sources.required();
        if (others.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        long epoch = node.epochForRequests();
        List<CompletableFuture<long[]>> answers = new ArrayList<>();
        for (Member m : others) {
            answers.add(node.send(ClusterNode.Lane.TRANSFER, m, "KVT.PEEK", Long.toString(epoch), key, "META").handle((r, e) -> {
                try {
                    if (e != null || !(r instanceof Reply.Aggregate a) || a.elements().size() != 3) {
                        return null;
                    }
                    return new long[] {integer(a.elements().get(0)), integer(a.elements().get(1))};
                } finally {
                    Reply.release(r);
                }
            }));
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).thenApply(v -> {
            Member best = null;
            long bestEpoch = -1;
            boolean bestHas = false;
            int answered = 0;
            for (int i = 0; i < others.size(); i++) {
                long[] a = answers.get(i).join();
                if (a == null) {
                    continue;
                }
                if (i < required) {
                    answered++;
                }
                if (a[0] > bestEpoch) {
                    bestEpoch = a[0];
                    best = others.get(i);
                    bestHas = a[1] != -2;
                }
            }
            if (answered < required) {
                // The silent one may be the freshest holder: an older one's "absent" or value could be stale.
                throw new TryAgainException((required - answered) + " of " + required
                        + " other nodes did not answer for a key of importing slot " + SlotHash.slot(key));
            }
            int slot = SlotHash.slot(key);
            if (!node.freshEnough(slot, bestEpoch)) {
                // No copy within reach is complete as of the newest epoch the log knows the slot complete at: the
                // copies that are, and may hold writes acknowledged since, are on nodes away (excluded, cut off).
                // An older copy's value or "absent" would be a guess; the key waits for them.
                throw new TryAgainException("no copy of slot " + slot + " within reach is complete as of epoch "
                        + node.completeEpochRequired(slot) + "; its holders are away");
            }
            return bestEpoch > 0 && bestHas ? best : null;
        });
    }

    /** Reads {@code key} from {@code holder} and puts it here if still absent. */
    private CompletableFuture<Void> copyFrom(Member holder, byte[] key) {
        long epoch = node.epochForRequests();
        return node.send(ClusterNode.Lane.TRANSFER, holder, "KVT.PEEK", Long.toString(epoch), key).thenCompose(r -> {
            try {
                if (r instanceof Reply.Error err) {
                    throw new TryAgainException(holder.id() + ": " + err.message());
                }
                if (!(r instanceof Reply.Aggregate a) || a.elements().size() != 3) {
                    throw new IllegalStateException("unexpected KVT.PEEK reply from " + holder.id() + ": " + r);
                }
                long stamp = integer(a.elements().get(0));
                int slot = SlotHash.slot(key);
                if (!node.freshEnough(slot, stamp)) {
                    // It dropped its copy since it was chosen (included again, or importing the slot itself).
                    throw new TryAgainException(holder.id() + " no longer holds a complete copy of slot " + slot);
                }
                long expireAt = integer(a.elements().get(1));
                if (expireAt == -2 || !(a.elements().get(2) instanceof Reply.Bulk bulk)) {
                    return node.settleAbsent(key);
                }
                ByteBuf value = bulk.content().retain();
                return node.putTransferred(key, expireAt, value);
            } finally {
                Reply.release(r);
            }
        });
    }

    private static long integer(Reply r) {
        if (r instanceof Reply.Int i) {
            return i.value();
        }
        throw new IllegalStateException("expected an integer, got " + r);
    }

    private void run() {
        while (!closed) {
            try {
                synchronized (signal) {
                    if (!woken) {
                        signal.wait(1_000);
                    }
                    woken = false;
                }
                BitSet want = node.importingSet();
                if (!want.isEmpty() && node.topology().serving()) {
                    importRound(want);
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                if (!closed) {
                    log.warn("import round failed (retrying): {}", e.toString());
                    sleepQuietly(200);
                }
            }
        }
    }

    /**
     * One import of the slots in {@code want} at the current epoch: find each slot's freshest holder, complete the
     * slots nobody holds, copy the rest from their holders in two passes, then mark them complete. Gives up (to start
     * over) when a member does not answer or the table changes meanwhile.
     */
    private void importRound(BitSet want) throws InterruptedException {
        long epoch = node.epoch();
        if (!node.firstTable() && !node.everyMemberConfirmed(epoch)) {
            // A primary that keeps its slot but has not applied this table yet still writes under the old one, to the
            // old backups only: a copy taken before it confirmed could miss a write acknowledged after. Members
            // confirm (renew) as soon as they apply a table, so this waits a log commit or two. Not in the cluster's
            // first table: there is no older one, and its slots must be complete before the next table comes (a
            // next table finding no complete copy anywhere would wait for one for ever: TlsIT, once).
            sleepQuietly(20);
            woken = true;
            return;
        }
        ImportProgress progress = node.importProgress;
        progress.begin(epoch, want.cardinality());
        long[] stamps = new long[SlotHash.SLOTS];
        Member[] best = freshestHolders(want, epoch, stamps);
        if (best == null) {
            sleepQuietly(200);
            woken = true;
            return;
        }
        freshest = best;
        BitSet nobody = new BitSet();
        Map<Member, BitSet> bySource = new HashMap<>();
        for (int s = want.nextSetBit(0); s >= 0; s = want.nextSetBit(s + 1)) {
            if (best[s] == null) {
                nobody.set(s);
            } else {
                bySource.computeIfAbsent(best[s], x -> new BitSet()).set(s);
            }
        }
        progress.copying(bySource.size());
        if (!nobody.isEmpty() && node.firstTable()) {
            node.completed(nobody, epoch); // the cluster's first table: nobody ever held these slots, nothing to copy
            progress.slotsDone(nobody.cardinality());
        } else if (!nobody.isEmpty()) {
            // Their complete copies are on nodes away (excluded, cut off): they stay importing and are retried.
            log.info("import at epoch {}: no complete copy of {} slots is within reach; retrying later", epoch,
                    nobody.cardinality());
        }
        long started = System.nanoTime();
        BitSet done = new BitSet();
        bySource.values().forEach(done::or);
        if (!node.dropLeftovers(done, epoch)) {
            return; // the table changed: start over with the new one
        }
        long keys = copyFromSources(bySource, epoch, progress);
        if (keys < 0) {
            return; // the table changed: start over with the new one
        }
        if (!sourcesUnchanged(bySource, stamps, epoch)) {
            sleepQuietly(200);
            woken = true;
            return; // a source dropped its copy meanwhile (included again, or importing the slot itself): start over
        }
        boolean applied = node.completed(done, epoch);
        if (!nobody.isEmpty() && !node.firstTable()) {
            sleepQuietly(500); // then again: the holders that are away may be back
            woken = true;
        }
        if (applied) {
            progress.finished();
        } else {
            progress.superseded(); // completed() ignored a round of an older table
        }
        log.info("import at epoch {}: {} slots from {} sources, {} keys scanned in {} ms", epoch, done.cardinality(),
                bySource.size(), keys, (System.nanoTime() - started) / 1_000_000);
    }

    /**
     * Per slot of {@code want}, the member holding the newest complete copy (null: nobody, or only copies older than
     * the slot's {@link ClusterNode#completeEpochRequired}), from every other member's KVT.SLOTINFO; null when some
     * member did not answer (its copy might be the newest). Fills {@code bestEpoch} with each holder's stamp.
     */
    private Member[] freshestHolders(BitSet want, long epoch, long[] bestEpoch) {
        ClusterNode.Sources sources = node.sources();
        List<Member> others = sources.all();
        int required = sources.required();
        Member[] best = new Member[SlotHash.SLOTS];
        int asked = 0;
        for (int i = 0; i < others.size(); i++) {
            Member m = others.get(i);
            long[] info = slotInfo(m, epoch);
            if (info == null) {
                continue;
            }
            if (i < required) {
                asked++;
            }
            for (int s = want.nextSetBit(0); s >= 0; s = want.nextSetBit(s + 1)) {
                if (info[s] > bestEpoch[s]) {
                    bestEpoch[s] = info[s];
                    best[s] = m;
                }
            }
        }
        if (asked < required) {
            log.info("import at epoch {}: {} of {} members answered SLOTINFO; retrying later", epoch, asked,
                    required);
            return null;
        }
        for (int s = want.nextSetBit(0); s >= 0; s = want.nextSetBit(s + 1)) {
            if (best[s] != null && !node.freshEnough(s, bestEpoch[s])) {
                best[s] = null; // older than a complete copy the log knows of: that one is away, the slot waits for it
            }
        }
        return best;
    }

    /**
     * Whether every source still stamps the slots taken from it as when the round chose it: a source that dropped its
     * copy meanwhile (included again after an exclusion, or an owner again after a break, purging its leftovers) may
     * have listed none of their keys, and completing them would serve the keys as absent.
     */
    private boolean sourcesUnchanged(Map<Member, BitSet> bySource, long[] stamps, long epoch) {
        for (Map.Entry<Member, BitSet> e : bySource.entrySet()) {
            long[] now = slotInfo(e.getKey(), epoch);
            BitSet slots = e.getValue();
            for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                if (now == null || now[s] != stamps[s]) {
                    log.info("import at epoch {}: {} no longer holds the copy of slot {} it was chosen for (stamp {},"
                            + " now {}); starting over", epoch, e.getKey().id(), s, stamps[s], now == null ? "?" : now[s]);
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Copies each source's slots in two passes (the second, one peer timeout later, catches keys that writes in flight
     * on the old owners created behind the first); returns the keys scanned, or -1 if the table changed meanwhile.
     */
    private long copyFromSources(Map<Member, BitSet> bySource, long epoch, ImportProgress progress)
            throws InterruptedException {
        long keys = 0;
        for (int pass = 1; pass <= 2; pass++) {
            progress.pass(pass);
            for (Map.Entry<Member, BitSet> e : bySource.entrySet()) {
                keys += copySlots(e.getKey(), e.getValue(), epoch);
                if (node.epoch() != epoch || closed) {
                    progress.superseded();
                    return -1;
                }
                if (pass == 1) {
                    progress.slotsCopied(e.getValue().cardinality());
                }
            }
            if (pass == 1) {
                // A write the old owner had in flight when it first heard of this epoch finished within the peer
                // timeout; a second scan after it catches keys such a write created behind the first scan.
                Thread.sleep(timeoutMillis());
            }
        }
        return keys;
    }

    /** lastComplete per slot at {@code m}, then its trusted flag (index SLOTS), or null if it did not answer. */
    long[] slotInfo(Member m, long epoch) {
        Reply r = null;
        try {
            r = node.send(ClusterNode.Lane.TRANSFER, m, "KVT.SLOTINFO", Long.toString(epoch)).get(timeoutMillis() * 2, TimeUnit.MILLISECONDS);
            if (!(r instanceof Reply.Bulk b) || b.content().readableBytes() != (SlotHash.SLOTS + 1) * Long.BYTES) {
                log.debug("SLOTINFO from {}: {}", m.id(), r);
                return null;
            }
            long[] out = new long[SlotHash.SLOTS + 1];
            ByteBuffer buf = b.content().nioBuffer();
            for (int s = 0; s < out.length; s++) {
                out[s] = buf.getLong();
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (Exception e) {
            log.debug("SLOTINFO from {} failed: {}", m.id(), e.toString());
            return null;
        } finally {
            Reply.release(r);
        }
    }

    /** Copies every key of {@code slots} that {@code source} holds; returns how many keys it listed. */
    private long copySlots(Member source, BitSet slots, long epoch) throws InterruptedException {
        byte[] bitmap = ClusterNode.toBitmap(slots);
        String cursor = "0";
        long listed = 0;
        do {
            Reply r = null;
            List<byte[]> keys = new ArrayList<>();
            try {
                r = node.send(ClusterNode.Lane.TRANSFER, source, "KVT.SLOTKEYS", Long.toString(epoch), cursor, Integer.toString(SCAN_BATCH),
                        Unpooled.wrappedBuffer(bitmap)).get(timeoutMillis() * 2, TimeUnit.MILLISECONDS);
                if (!(r instanceof Reply.Aggregate a) || a.elements().isEmpty()) {
                    throw new IllegalStateException("KVT.SLOTKEYS from " + source.id() + ": " + r);
                }
                cursor = ((Reply.Bulk) a.elements().get(0)).utf8();
                for (int i = 1; i < a.elements().size(); i++) {
                    keys.add(((Reply.Bulk) a.elements().get(i)).bytes());
                }
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("KVT.SLOTKEYS from " + source.id() + " failed: " + e, e);
            } finally {
                Reply.release(r);
            }
            for (byte[] key : keys) {
                if (node.store().exists(key) || node.tombstones.containsKey(new ClusterNode.ByteKey(key))) {
                    continue;
                }
                long before = node.counters.fetchedBytes().sum();
                try {
                    fetch(key, source).get(timeoutMillis() * 4, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    throw new IllegalStateException("copying a key from " + source.id() + " failed: " + e, e);
                }
                pace(node.counters.fetchedBytes().sum() - before);
                if (node.epoch() != epoch || closed) {
                    return listed;
                }
            }
            listed += keys.size();
            node.importProgress.listed(keys.size());
        } while (!cursor.equals("0"));
        return listed;
    }

    /** Sleeps as long as needed to keep the copy at or below --rebalance-rate. */
    private void pace(long bytes) throws InterruptedException {
        pacedBytes += bytes;
        long elapsedNanos = System.nanoTime() - pacedSince;
        long dueNanos = (long) (pacedBytes * 1e9 / node.settings().rebalanceBytesPerSecond());
        if (dueNanos > elapsedNanos) {
            TimeUnit.NANOSECONDS.sleep(dueNanos - elapsedNanos);
        }
        if (elapsedNanos > 1_000_000_000L) { // a fresh window each second: idle time is not saved up
            pacedBytes = 0;
            pacedSince = System.nanoTime();
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
