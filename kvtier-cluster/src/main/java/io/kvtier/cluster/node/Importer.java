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
    /** Slots the last round found no fresh enough copy of within reach (CLUSTER INFO). */
    private volatile BitSet waiting = new BitSet();
    /** The epoch at which slots began waiting for a copy, and since when (the importer's thread only). */
    private long waitingEpoch = -1;
    private long waitingSinceNanos;
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
     * Settles {@code key} here from its freshest holder: copied if the holder's value differs from the one here (its
     * cluster version or expiry), deleted here if the holder does not have it, left alone if equal. {@code from} is
     * that holder when the caller knows it (the background copy, which compared versions already); otherwise every
     * other member is asked for its stamp of the slot and the key's version, and the freshest decides. A slot whose
     * loss was accepted merges instead: the newest version among the best surviving copies wins, and an absent key
     * elsewhere deletes nothing here. Concurrent fetches of one key share one attempt.
     */
    CompletableFuture<Void> fetch(byte[] key, Member from) {
        ClusterNode.ByteKey k = new ClusterNode.ByteKey(key);
        CompletableFuture<Void> mine = new CompletableFuture<>();
        CompletableFuture<Void> running = inFlight.putIfAbsent(k, mine);
        if (running != null) {
            return running;
        }
        int slot = SlotHash.slot(key);
        boolean merge = node.lossAccepted(slot);
        Member cached = merge ? null : freshest[slot];
        CompletableFuture<Probe> probed = cached == null ? probe(key)
                : probeOne(cached, key).exceptionallyCompose(e -> probe(key)); // the cached holder may be gone
        CompletableFuture<Void> copied = from != null ? copyFrom(from, key, merge) : probed.thenCompose(p -> {
            if (p.holder == null || p.version < 0) {
                return node.settleAbsent(key, merge); // the freshest copy lacks it: a leftover here goes
            }
            if (node.settleIfSame(key, p.version, p.expireAt, merge)) {
                return CompletableFuture.<Void>completedFuture(null);
            }
            return copyFrom(p.holder, key, merge);
        });
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
     * What the freshest copy of a key's slot holds of it: the holder (null: nobody holds any copy, the cluster's first
     * table), and the key's version (-1: absent there) and expiry.
     */
    private record Probe(Member holder, long version, long expireAt) {
    }

    /**
     * Asks every other member about {@code key} (KVT.PEEK META): the freshest holder of its slot and what it holds;
     * with a merge (accepted loss), among the copies of the newest epoch the one with the newest version of the key.
     * Fails (TRYAGAIN) unless every member of the table answered, or when no copy within reach is fresh enough.
     */
    private CompletableFuture<Probe> probe(byte[] key) {
        ClusterNode.Sources sources = node.sources();
        List<Member> others = sources.all();
        int required = sources.required();
        int slot = SlotHash.slot(key);
        if (others.isEmpty()) {
            if (!node.freshEnough(slot, 0)) {
                return CompletableFuture.failedFuture(new TryAgainException("no other node holds a copy of slot "
                        + slot + " complete as of epoch " + node.completeEpochRequired(slot)));
            }
            return CompletableFuture.completedFuture(new Probe(null, -1, 0));
        }
        long epoch = node.epochForRequests();
        List<CompletableFuture<long[]>> answers = new ArrayList<>();
        for (Member m : others) {
            answers.add(node.send(ClusterNode.Lane.TRANSFER, m, "KVT.PEEK", Long.toString(epoch), key, "META")
                    .handle((r, e) -> {
                        try {
                            if (e != null || !(r instanceof Reply.Aggregate a) || a.elements().size() != 4) {
                                return null;
                            }
                            return new long[] {integer(a.elements().get(0)), integer(a.elements().get(1)),
                                    integer(a.elements().get(2))};
                        } finally {
                            Reply.release(r);
                        }
                    }));
        }
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).thenApply(v -> {
            boolean merge = node.lossAccepted(slot);
            int answered = 0;
            int best = -1;
            long bestStamp = 0;
            for (int i = 0; i < others.size(); i++) {
                long[] a = answers.get(i).join();
                if (a == null) {
                    continue;
                }
                if (i < required) {
                    answered++;
                }
                if (!node.freshEnough(slot, a[0])) {
                    continue;
                }
                boolean better = best < 0 || ClusterNode.epochOf(a[0]) > ClusterNode.epochOf(bestStamp)
                        || ClusterNode.epochOf(a[0]) == ClusterNode.epochOf(bestStamp)
                        && (merge ? a[2] > answers.get(best).join()[2]
                        : ClusterNode.dirty(bestStamp) && !ClusterNode.dirty(a[0]));
                if (better) {
                    best = i;
                    bestStamp = a[0];
                }
            }
            if (answered < required) {
                // The silent one may be the freshest holder: an older one's "absent" or value could be stale.
                throw new TryAgainException((required - answered) + " of " + required
                        + " other nodes did not answer for a key of importing slot " + slot);
            }
            if (best < 0) {
                if (node.firstTable()) {
                    return new Probe(null, -1, 0);
                }
                // No copy within reach is complete as of the newest epoch the log knows the slot complete at: the
                // copies that are, and may hold writes acknowledged since, are on nodes away (excluded, cut off).
                // An older copy's value or "absent" would be a guess; the key waits for them.
                throw new TryAgainException("no copy of slot " + slot + " within reach is complete as of epoch "
                        + node.completeEpochRequired(slot) + "; its holders are away");
            }
            long[] a = answers.get(best).join();
            return new Probe(others.get(best), a[1] == -2 ? -1 : a[2], a[1]);
        });
    }

    /**
     * {@link #probe} of the holder the last import round found freshest for the key's slot, alone: one round trip
     * instead of one to every member. Fails if it no longer holds a fresh enough copy.
     */
    private CompletableFuture<Probe> probeOne(Member holder, byte[] key) {
        long epoch = node.epochForRequests();
        int slot = SlotHash.slot(key);
        return node.send(ClusterNode.Lane.TRANSFER, holder, "KVT.PEEK", Long.toString(epoch), key, "META")
                .thenApply(r -> {
                    try {
                        if (!(r instanceof Reply.Aggregate a) || a.elements().size() != 4
                                || !node.freshEnough(slot, integer(a.elements().get(0)))) {
                            throw new TryAgainException(holder.id() + " no longer holds a fresh copy of slot " + slot);
                        }
                        long expireAt = integer(a.elements().get(1));
                        return new Probe(holder, expireAt == -2 ? -1 : integer(a.elements().get(2)), expireAt);
                    } finally {
                        Reply.release(r);
                    }
                });
    }

    /** Reads {@code key} from {@code holder} (KVT.PEEK) and settles it here: put, replaced or deleted. */
    private CompletableFuture<Void> copyFrom(Member holder, byte[] key, boolean merge) {
        long epoch = node.epochForRequests();
        return node.send(ClusterNode.Lane.TRANSFER, holder, "KVT.PEEK", Long.toString(epoch), key).thenCompose(r -> {
            try {
                if (r instanceof Reply.Error err) {
                    throw new TryAgainException(holder.id() + ": " + err.message());
                }
                if (!(r instanceof Reply.Aggregate a) || a.elements().size() != 4) {
                    throw new IllegalStateException("unexpected KVT.PEEK reply from " + holder.id() + ": " + r);
                }
                long stamp = integer(a.elements().get(0));
                int slot = SlotHash.slot(key);
                if (!node.freshEnough(slot, stamp)) {
                    // It dropped its copy since it was chosen (included again, or importing the slot itself).
                    throw new TryAgainException(holder.id() + " no longer holds a complete copy of slot " + slot);
                }
                long expireAt = integer(a.elements().get(1));
                long version = integer(a.elements().get(2));
                if (expireAt == -2 || !(a.elements().get(3) instanceof Reply.Bulk bulk)) {
                    return node.settleAbsent(key, merge);
                }
                ByteBuf value = bulk.content().retain();
                return node.putTransferred(key, expireAt, value, version, merge);
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
                } else if (want.isEmpty()) {
                    waiting = new BitSet();
                    node.reapCopies(); // copies of slots it no longer owns, once nobody can need them
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
     * One import of the slots in {@code want} at the current epoch: find each slot's freshest holder (with an accepted
     * loss, every holder of the newest surviving copies), complete the slots nobody holds in the cluster's first table,
     * compare this node's copy of the rest with their holders' in two passes (copying only the keys that differ), then
     * mark them complete. Gives up (to start over) when a member does not answer or the table changes meanwhile.
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
        Holders holders = holders(want, epoch);
        if (holders == null) {
            sleepQuietly(200);
            woken = true;
            return;
        }
        Member[] first = new Member[SlotHash.SLOTS];
        holders.bySource.forEach((m, slots) -> {
            for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                if (first[s] == null) {
                    first[s] = m;
                }
            }
        });
        freshest = first;
        progress.copying(holders.bySource.size());
        if (!holders.nobody.isEmpty() && node.firstTable()) {
            node.completed(holders.nobody, epoch); // the cluster's first table: nobody ever held these slots
            progress.slotsDone(holders.nobody.cardinality());
        } else if (!holders.nobody.isEmpty()) {
            // Their complete copies are on nodes away (excluded, cut off, or stopped uncleanly): they stay importing
            // and are retried; an operator who knows they are gone accepts the loss (ACCEPT-LOSS).
            waiting = (BitSet) holders.nobody.clone();
            log.info("import at epoch {}: no complete copy of {} slots ({}) is within reach; retrying later", epoch,
                    holders.nobody.cardinality(), ranges(holders.nobody));
            serveLostCopies(epoch, holders.nobody);
        } else {
            waiting = new BitSet();
        }
        long started = System.nanoTime();
        BitSet done = new BitSet();
        holders.bySource.values().forEach(done::or);
        done.or(holders.ownOnly);
        BitSet merged = new BitSet();
        BitSet replaced = new BitSet();
        for (int s = done.nextSetBit(0); s >= 0; s = done.nextSetBit(s + 1)) {
            (holders.mergeOwn.get(s) ? merged : replaced).set(s);
        }
        // A copy merged into only gains keys: it stays a surviving copy others may merge from, stamp and all.
        if (!node.beginDiff(replaced, epoch)) {
            return; // the table changed: start over with the new one
        }
        long keys = copyFromSources(holders.bySource, epoch, progress);
        if (keys < 0) {
            return; // the table changed: start over with the new one
        }
        if (!sourcesUnchanged(holders.bySource, holders.stamps, epoch)) {
            sleepQuietly(200);
            woken = true;
            return; // a source dropped its copy meanwhile (included again, or importing the slot itself): start over
        }
        if (!node.finishDiff(replaced, epoch, false) || !node.finishDiff(merged, epoch, true)) {
            return;
        }
        boolean applied = node.completed(done, epoch);
        if (!holders.nobody.isEmpty() && !node.firstTable()) {
            sleepQuietly(500); // then again: the holders that are away may be back
            woken = true;
        }
        if (applied) {
            progress.finished();
        } else {
            progress.superseded(); // completed() ignored a round of an older table
        }
        BitSet lossMerged = new BitSet();
        for (int s = merged.nextSetBit(0); s >= 0; s = merged.nextSetBit(s + 1)) {
            if (node.lossAccepted(s)) {
                lossMerged.set(s);
            }
        }
        if (!lossMerged.isEmpty()) {
            log.warn("import at epoch {}: {} slots whose loss was accepted ({}) are served from the best surviving "
                    + "copies, merged (the newest version of each key wins); what only their lost copies held is gone",
                    epoch, lossMerged.cardinality(), ranges(lossMerged));
        }
        log.info("import at epoch {}: {} slots from {} sources, {} keys compared in {} ms", epoch, done.cardinality(),
                holders.bySource.size(), keys, (System.nanoTime() - started) / 1_000_000);
    }

    /**
     * Where the slots of one round come from: per source the slots it is taken from (with an accepted loss a slot may
     * come from several, merged), the slots only this node's own copy is the best of ({@code ownOnly}), those merged
     * into this node's own copy ({@code mergeOwn}, as opposed to replaced by the sources'), those nobody within reach
     * holds fresh enough ({@code nobody}), and each source's stamp as chosen.
     */
    private record Holders(Map<Member, BitSet> bySource, BitSet ownOnly, BitSet mergeOwn, BitSet nobody,
                           Map<Member, long[]> stamps) {
    }

    /**
     * The holders of {@code want} from every other member's KVT.SLOTINFO: per slot the member with the newest copy
     * fresh enough for it ({@link ClusterNode#freshEnough}; clean before dirty at one epoch), or, for a slot whose loss
     * was accepted, every member (this node included) holding a copy of the newest epoch any holder has. Null when a
     * member of the table did not answer (its copy might be the newest).
     */
    private Holders holders(BitSet want, long epoch) {
        ClusterNode.Sources sources = node.sources();
        List<Member> others = sources.all();
        int required = sources.required();
        List<long[]> infos = new ArrayList<>();
        int asked = 0;
        for (int i = 0; i < others.size(); i++) {
            long[] info = slotInfo(others.get(i), epoch);
            infos.add(info);
            if (info != null && i < required) {
                asked++;
            }
        }
        if (asked < required) {
            log.info("import at epoch {}: {} of {} members answered SLOTINFO; retrying later", epoch, asked,
                    required);
            return null;
        }
        Map<Member, BitSet> bySource = new HashMap<>();
        Map<Member, long[]> stamps = new HashMap<>();
        BitSet ownOnly = new BitSet();
        BitSet mergeOwn = new BitSet();
        BitSet nobody = new BitSet();
        for (int s = want.nextSetBit(0); s >= 0; s = want.nextSetBit(s + 1)) {
            if (node.lossAccepted(s)) {
                long own = node.ownCopyStamp(s);
                long newest = ClusterNode.epochOf(own);
                boolean any = own != 0;
                for (long[] info : infos) {
                    if (info != null && info[s] != 0) {
                        newest = Math.max(newest, ClusterNode.epochOf(info[s]));
                        any = true;
                    }
                }
                if (!any) {
                    nobody.set(s); // no copy of it survives anywhere within reach
                    continue;
                }
                boolean fromOthers = false;
                for (int i = 0; i < others.size(); i++) {
                    long[] info = infos.get(i);
                    if (info != null && info[s] != 0 && ClusterNode.epochOf(info[s]) == newest) {
                        bySource.computeIfAbsent(others.get(i), x -> new BitSet()).set(s);
                        stamps.computeIfAbsent(others.get(i), x -> new long[SlotHash.SLOTS])[s] = info[s];
                        fromOthers = true;
                    }
                }
                if (own != 0 && ClusterNode.epochOf(own) == newest) {
                    mergeOwn.set(s);
                    if (!fromOthers) {
                        ownOnly.set(s);
                    }
                }
                continue;
            }
            int best = -1;
            long bestStamp = 0;
            for (int i = 0; i < others.size(); i++) {
                long[] info = infos.get(i);
                if (info == null || !node.freshEnough(s, info[s])) {
                    continue;
                }
                long e = ClusterNode.epochOf(info[s]);
                if (best < 0 || e > ClusterNode.epochOf(bestStamp)) {
                    best = i;
                    bestStamp = info[s];
                }
            }
            if (best < 0 && completesFromOwnCopy(s, others, infos)) {
                ownOnly.set(s);
                mergeOwn.set(s); // its own copy is kept whole: nothing is replaced
            } else if (best < 0) {
                nobody.set(s); // older than a complete copy the log knows of: that one is away, the slot waits
            } else {
                bySource.computeIfAbsent(others.get(best), x -> new BitSet()).set(s);
                stamps.computeIfAbsent(others.get(best), x -> new long[SlotHash.SLOTS])[s] = bestStamp;
            }
        }
        return new Holders(bySource, ownOnly, mergeOwn, nobody, stamps);
    }

    /**
     * Whether this node completes {@code slot} from its own copy, for want of a clean one within reach: its copy is
     * fresh enough but for a write here that its backups never confirmed ({@link NodeState#UNCONFIRMED}: a primary
     * paused or cut off in the middle of a synchronous write, then excluded), so it holds every acknowledged write and
     * perhaps that one more, whose client was told its outcome is unknown; and of such copies within reach it has the
     * newest (the lowest id among equals, so that two owners never both complete from their own). The other owners then
     * import from it. Without this the slot waited for ever: the copy's other owner was importing it, and this one
     * would take no copy but a clean one (the pause soak, two nodes SIGSTOPped in turn).
     */
    private boolean completesFromOwnCopy(int slot, List<Member> others, List<long[]> infos) {
        long own = node.ownCopyStamp(slot);
        long required = node.completeEpochRequired(slot);
        if (own == 0 || !ClusterNode.unconfirmedOnly(own) || ClusterNode.epochOf(own) < required) {
            return false;
        }
        String self = node.topology().self().id();
        for (int i = 0; i < others.size(); i++) {
            long[] info = infos.get(i);
            if (info == null || info[slot] == 0 || !ClusterNode.unconfirmedOnly(info[slot])) {
                continue;
            }
            long theirs = ClusterNode.epochOf(info[slot]);
            long mine = ClusterNode.epochOf(own);
            if (theirs > mine || theirs == mine && others.get(i).id().compareTo(self) < 0) {
                return false; // theirs is the one to complete from: this node imports it once it is complete
            }
        }
        log.warn("import at epoch {}: slot {} has no clean complete copy within reach; this node completes it from "
                + "its own copy, which holds every acknowledged write and perhaps one that was never confirmed",
                node.epoch(), slot);
        return true;
    }

    /**
     * With {@code --lost-copies serve}: accepts the loss of {@code slots}' complete copies (their owners then merge what
     * survives) once every member is up (no complete copy can come back) or they have waited
     * {@link ClusterSettings#LOST_COPY_GRACE} at this epoch.
     */
    private void serveLostCopies(long epoch, BitSet slots) {
        if (!node.settings().serveLostCopies()) {
            return;
        }
        if (waitingEpoch != epoch) {
            waitingEpoch = epoch;
            waitingSinceNanos = System.nanoTime();
        }
        boolean everyoneUp = node.config() != null && node.config().current().down().isEmpty();
        long waited = System.nanoTime() - waitingSinceNanos;
        if (everyoneUp || waited > ClusterSettings.LOST_COPY_GRACE.toNanos()) {
            log.warn("import at epoch {}: --lost-copies serve: accepting the loss of {} slots' complete copies ({}); "
                    + "{}", epoch, slots.cardinality(), ranges(slots), everyoneUp ? "every member is up, none holds one"
                    : "none came back within " + ClusterSettings.LOST_COPY_GRACE.toSeconds() + " s");
            node.acceptLoss(epoch, slots);
        }
    }

    /** This node's importing slots that the last round found no fresh enough copy of within reach. */
    BitSet waiting() {
        return (BitSet) waiting.clone();
    }

    /** {@code slots} as text, ranges of consecutive slots ("0-99, 200"). */
    static String ranges(BitSet slots) {
        StringBuilder b = new StringBuilder();
        for (int s = slots.nextSetBit(0); s >= 0; ) {
            int end = slots.nextClearBit(s) - 1;
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append(s);
            if (end > s) {
                b.append('-').append(end);
            }
            if (b.length() > 200) {
                return b.append(", ...").toString();
            }
            s = slots.nextSetBit(end + 1);
        }
        return b.toString();
    }

    /**
     * Whether every source still stamps the slots taken from it as when the round chose it: a source that dropped its
     * copy meanwhile (included again after an exclusion, or an owner again after a break, purging its leftovers) may
     * have listed none of their keys, and completing them would serve the keys as absent.
     */
    private boolean sourcesUnchanged(Map<Member, BitSet> bySource, Map<Member, long[]> stamps, long epoch) {
        for (Map.Entry<Member, BitSet> e : bySource.entrySet()) {
            long[] now = slotInfo(e.getKey(), epoch);
            long[] then = stamps.get(e.getKey());
            BitSet slots = e.getValue();
            for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                if (now == null || now[s] != then[s]) {
                    log.info("import at epoch {}: {} no longer holds the copy of slot {} it was chosen for (stamp {},"
                            + " now {}); starting over", epoch, e.getKey().id(), s, then[s], now == null ? "?" : now[s]);
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Compares each source's slots with this node's copy in two passes (the second, one peer timeout later, catches
     * keys that writes in flight on the old owners created behind the first); returns the keys compared, or -1 if the
     * table changed meanwhile.
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
            if (pass == 1 && !bySource.isEmpty()) {
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
            r = await(node.send(ClusterNode.Lane.TRANSFER, m, "KVT.SLOTINFO", Long.toString(epoch)),
                    timeoutMillis() * 2);
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

    /**
     * Compares this node's copy of {@code slots} with {@code source}'s, key by key (KVT.SLOTKEYS with versions): a key
     * here at the source's version and expiry is settled without copying; any other is copied (KVT.PEEK); keys
     * written here since the import began are left alone. Returns how many keys the source listed.
     */
    private long copySlots(Member source, BitSet slots, long epoch) throws InterruptedException {
        byte[] bitmap = ClusterNode.toBitmap(slots);
        String cursor = "0";
        long listed = 0;
        do {
            Reply r = null;
            List<byte[]> keys = new ArrayList<>();
            List<long[]> meta = new ArrayList<>();
            try {
                r = await(node.send(ClusterNode.Lane.TRANSFER, source, "KVT.SLOTKEYS", Long.toString(epoch), cursor,
                        Integer.toString(SCAN_BATCH), Unpooled.wrappedBuffer(bitmap), "VERSIONS"), timeoutMillis() * 2);
                if (!(r instanceof Reply.Aggregate a) || a.elements().isEmpty() || a.elements().size() % 3 != 1) {
                    throw new IllegalStateException("KVT.SLOTKEYS from " + source.id() + ": " + r);
                }
                cursor = ((Reply.Bulk) a.elements().get(0)).utf8();
                for (int i = 1; i < a.elements().size(); i += 3) {
                    keys.add(((Reply.Bulk) a.elements().get(i)).bytes());
                    meta.add(new long[] {integer(a.elements().get(i + 1)), integer(a.elements().get(i + 2))});
                }
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("KVT.SLOTKEYS from " + source.id() + " failed: " + e, e);
            } finally {
                Reply.release(r);
            }
            for (int i = 0; i < keys.size(); i++) {
                byte[] key = keys.get(i);
                boolean merge = node.lossAccepted(SlotHash.slot(key));
                if (!merge && node.tombstones.containsKey(new ClusterNode.ByteKey(key))
                        || node.settleIfSame(key, meta.get(i)[0], meta.get(i)[1], merge)
                        || !merge && !node.leftover(SlotHash.slot(key)) && node.store().exists(key)) {
                    continue; // written here during the import, here already at that very version, or fresh here
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

    /**
     * {@code reply}'s value within {@code millis}. When the wait ends first (a timeout, or this thread interrupted as
     * the node stops), a reply that arrives later is nobody's: it is released then.
     */
    private static Reply await(CompletableFuture<Reply> reply, long millis) throws InterruptedException,
            java.util.concurrent.ExecutionException, java.util.concurrent.TimeoutException {
        try {
            return reply.get(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException | java.util.concurrent.TimeoutException e) {
            reply.thenAccept(Reply::release);
            throw e;
        }
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
