package io.kvtier.cluster.topology;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import io.kvtier.cluster.SlotTable;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jgroups.raft.StateMachine;

/**
 * The Raft state machine of the cluster's configuration ({@link ClusterConfig}). Its commands are deterministic: every
 * replica that applies one log prefix holds the same configuration, so a table is in force everywhere exactly when the
 * log commits it. Decisions that depend on time (has a member's lease run out?) are taken by the leader
 * ({@link ConfigService}) and proposed as commands conditioned on what it saw ({@code renewals}), so a renewal that
 * commits in between voids them. Also keeps, locally and outside the replicated state, when this replica applied each
 * member's newest renewal: the leader's clock for lease expiry.
 *
 * <p>Commands, big-endian, first byte the kind:
 * <ul>
 *   <li>{@code SETUP replicas}: sets the backups per slot once, from the first leader's settings.</li>
 *   <li>{@code RENEW id incarnation appliedEpoch weight endpoint importingSlotRanges}: from every process, every quarter
 *       lease. If that incarnation is active: counts a renewal, records the epoch it has applied (and, if that is the
 *       current table, which of its slots it is complete for: {@link ClusterConfig#completeEpoch}), and answers 1
 *       (its lease holds from when it sent this) once it has applied the table that included it. Otherwise it is recorded
 *       as a candidate, with the epoch it has caught up to, and answered 0.</li>
 *   <li>{@code INCLUDE n (id incarnation)*}: makes candidates active, each if no incarnation of its id is (an older
 *       one is excluded first, once its lease has run out); a member that was down is up again, in its own place; one
 *       new table for all of them.</li>
 *   <li>{@code EXCLUDE id incarnation expectedRenewals}: takes an active member whose lease ran out down (its slots
 *       stay its own, led by their other owners meanwhile), if no renewal committed since the leader saw it expire; a
 *       new table.</li>
 *   <li>{@code STOP id incarnation}: a member that stopped serving (a graceful stop) goes down; a new table.</li>
 *   <li>{@code LEAVE id incarnation}: a member leaves the cluster for good (an operator's leave): its slots go to the
 *       others, who copy them from it while it still runs; a new table.</li>
 *   <li>{@code FORGET id}: a member that is down leaves the cluster (an operator's forget, or down for longer than
 *       --down-after): its slots go to the others; a new table.</li>
 *   <li>{@code REBALANCE}: the lead of each slot goes back to its first owner in placement order where that one is
 *       complete for it (a member back from down, or a joiner, that finished importing); a new table if any moves.</li>
 *   <li>{@code ACCEPT_LOSS epoch slotRanges}: if the table is still {@code epoch}'s, of those slots every one that no
 *       member is complete for at this epoch gets
 *       {@link ClusterConfig#LOSS_ACCEPTED}: its owners merge the copies that survive instead of waiting for one that
 *       holds every acknowledged write (an operator's command, or --lost-copies serve).</li>
 * </ul>
 * Thread-safe: Raft applies from one thread; readers take {@link #current()}.
 */
public final class ConfigStateMachine implements StateMachine {
    static final byte SETUP = 1;
    static final byte RENEW = 2;
    static final byte INCLUDE = 3;
    static final byte EXCLUDE = 4;
    static final byte LEAVE = 5;
    static final byte STOP = 6;
    static final byte FORGET = 7;
    static final byte REBALANCE = 8;
    static final byte ACCEPT_LOSS = 9;
    static final byte[] YES = {1};
    static final byte[] NO = {0};
    /** An apply this slow is logged: renewals (every quarter lease) wait behind it. */
    private static final long SLOW_APPLY_MILLIS = 100;
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ConfigStateMachine.class);

    private final Consumer<ClusterConfig> listener;
    private final Map<String, Long> renewedAtNanos = new ConcurrentHashMap<>();
    private final Map<String, Long> candidateRenewedAtNanos = new ConcurrentHashMap<>();
    private volatile ClusterConfig current = ClusterConfig.empty();

    /** {@code listener} is told of every new configuration, on Raft's apply thread: keep it short. */
    public ConfigStateMachine(Consumer<ClusterConfig> listener) {
        this.listener = listener;
    }

    public ClusterConfig current() {
        return current;
    }

    /**
     * When this replica applied the newest renewal of candidate {@code id} as incarnation {@code incarnation}
     * ({@link System#nanoTime}); null: never. Local, not replicated: a leader includes only candidates it has seen
     * renew since it leads (a candidate replayed from the log may be a process that is gone).
     */
    Long candidateRenewedAtNanos(String id, long incarnation) {
        return candidateRenewedAtNanos.get(id + "/" + incarnation);
    }

    /** When this replica applied {@code id}'s newest renewal or its inclusion ({@link System#nanoTime}); null: never. */
    Long renewedAtNanos(String id) {
        return renewedAtNanos.get(id);
    }

    @Override
    public byte[] apply(byte[] data, int offset, int length, boolean serializeResponse) throws Exception {
        long start = System.nanoTime();
        try {
            return applyEntry(data, offset, length);
        } finally {
            long millis = (System.nanoTime() - start) / 1_000_000;
            if (millis >= SLOW_APPLY_MILLIS) {
                // Raft commits nothing else meanwhile: every lease renewal waits behind it.
                log.info("applying a configuration entry (kind {}) took {} ms", data[offset], millis);
            }
        }
    }

    private byte[] applyEntry(byte[] data, int offset, int length) throws Exception {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(data, offset, length));
        byte kind = in.readByte();
        ClusterConfig before = current;
        ClusterConfig after;
        boolean yes;
        switch (kind) {
            case SETUP -> {
                int replicas = in.readInt();
                yes = before.replicas() < 0;
                after = yes ? new ClusterConfig(before.epoch(), replicas, before.members(), before.down(),
                        before.candidates(), before.table(), before.primarySince(), before.firstEpoch(),
                        before.completeEpoch()) : before;
            }
            case RENEW -> {
                String id = in.readUTF();
                long incarnation = in.readLong();
                long applied = in.readLong();
                Member member = new Member(id, in.readLong(), in.readUTF());
                BitSet importingSlots = readSlots(in);
                int importing = importingSlots.cardinality();
                ClusterConfig.Active a = before.members().get(id);
                if (a != null && a.incarnation() == incarnation) {
                    // A lease only for a member that has applied the table that included it: one excluded and
                    // included again while it was away (a pause) must not serve the tables it had before.
                    yes = applied >= a.includedEpoch();
                    Map<String, ClusterConfig.Active> members = new TreeMap<>(before.members());
                    members.put(id, new ClusterConfig.Active(a.member(), incarnation, a.includedEpoch(),
                            Math.max(a.confirmedEpoch(), Math.min(applied, before.epoch())), a.renewals() + 1,
                            importing, a.complete()));
                    after = new ClusterConfig(before.epoch(), before.replicas(), members, before.down(),
                            before.candidates(), before.table(), before.primarySince(), before.firstEpoch(),
                            before.completeEpoch());
                    if (applied == before.epoch()) {
                        // Its importing slots as of this very table (a report taken under an older one commits
                        // after the newer table, so it fails this test).
                        after = after.reported(id, importingSlots);
                    }
                    renewedAtNanos.put(id, System.nanoTime());
                } else {
                    yes = false;
                    candidateRenewedAtNanos.put(id + "/" + incarnation, System.nanoTime());
                    ClusterConfig.Candidate known = before.candidates().get(id);
                    long caughtUp = Math.min(applied, before.epoch());
                    if (known != null && known.incarnation() == incarnation && known.member().equals(member)
                            && known.appliedEpoch() == caughtUp) {
                        after = before;
                    } else {
                        Map<String, ClusterConfig.Candidate> candidates = new TreeMap<>(before.candidates());
                        candidates.put(id, new ClusterConfig.Candidate(member, incarnation, caughtUp));
                        after = new ClusterConfig(before.epoch(), before.replicas(), before.members(), before.down(),
                                candidates, before.table(), before.primarySince(), before.firstEpoch(),
                                before.completeEpoch());
                    }
                }
            }
            case INCLUDE -> {
                int n = in.readInt();
                Map<String, ClusterConfig.Active> members = new TreeMap<>(before.members());
                Map<String, ClusterConfig.Down> down = new TreeMap<>(before.down());
                Map<String, ClusterConfig.Candidate> candidates = new TreeMap<>(before.candidates());
                for (int i = 0; i < n; i++) {
                    String id = in.readUTF();
                    long incarnation = in.readLong();
                    ClusterConfig.Candidate c = candidates.get(id);
                    if (c != null && c.incarnation() == incarnation && !members.containsKey(id)) {
                        candidates.remove(id);
                        down.remove(id); // back in its own place
                        members.put(id, new ClusterConfig.Active(c.member(), incarnation, before.epoch() + 1, 0, 0,
                                ClusterConfig.Active.NOT_REPORTED, new BitSet()));
                        renewedAtNanos.put(id, System.nanoTime());
                    }
                }
                yes = before.replicas() >= 0 && members.size() > before.members().size();
                after = yes ? before.withTable(members, down, candidates, ClusterConfig.Leading.KEEP) : before;
            }
            case EXCLUDE -> {
                String id = in.readUTF();
                long incarnation = in.readLong();
                long expected = in.readLong();
                ClusterConfig.Active a = before.members().get(id);
                yes = a != null && a.incarnation() == incarnation && a.renewals() == expected;
                after = yes ? takenDown(before, id, false) : before;
            }
            case STOP -> {
                String id = in.readUTF();
                long incarnation = in.readLong();
                ClusterConfig.Active a = before.members().get(id);
                yes = a != null && a.incarnation() == incarnation;
                after = yes ? takenDown(before, id, true) : before;
            }
            case LEAVE -> {
                String id = in.readUTF();
                long incarnation = in.readLong();
                ClusterConfig.Active a = before.members().get(id);
                yes = a != null && a.incarnation() == incarnation;
                after = yes ? removed(before, id) : before;
            }
            case FORGET -> {
                String id = in.readUTF();
                yes = before.down().containsKey(id);
                after = yes ? removed(before, id) : before;
            }
            case REBALANCE -> {
                ClusterConfig rebalanced = before.rebalanced();
                yes = rebalanced != null;
                after = yes ? rebalanced : before;
            }
            case ACCEPT_LOSS -> {
                long decidedAt = in.readLong();
                BitSet slots = readSlots(in);
                if (decidedAt != before.epoch()) {
                    slots.clear(); // decided under another table: what waited then may have its copy now
                }
                long[] complete = before.completeEpoch().clone();
                int accepted = 0;
                for (int s = slots.nextSetBit(0); s >= 0; s = slots.nextSetBit(s + 1)) {
                    if (complete[s] != before.epoch() && complete[s] != ClusterConfig.LOSS_ACCEPTED) {
                        complete[s] = ClusterConfig.LOSS_ACCEPTED;
                        accepted++;
                    }
                }
                yes = accepted > 0;
                after = yes ? new ClusterConfig(before.epoch(), before.replicas(), before.members(), before.down(),
                        before.candidates(), before.table(), before.primarySince(), before.firstEpoch(), complete)
                        : before;
            }
            default -> throw new IllegalArgumentException("unknown configuration command kind " + kind);
        }
        if (after != before) {
            current = after;
            listener.accept(after);
        }
        return yes ? YES : NO;
    }

    /** {@code before} with active member {@code id} down: still placed, not serving. */
    private static ClusterConfig takenDown(ClusterConfig before, String id, boolean stopped) {
        Map<String, ClusterConfig.Active> members = new TreeMap<>(before.members());
        ClusterConfig.Active a = members.remove(id);
        Map<String, ClusterConfig.Down> down = new TreeMap<>(before.down());
        down.put(id, new ClusterConfig.Down(a.member(), before.epoch() + 1, stopped));
        return before.withTable(members, down, before.candidates(), ClusterConfig.Leading.KEEP);
    }

    /** {@code before} without member {@code id}, active or down: its slots are placed among the others. */
    private static ClusterConfig removed(ClusterConfig before, String id) {
        Map<String, ClusterConfig.Active> members = new TreeMap<>(before.members());
        members.remove(id);
        Map<String, ClusterConfig.Down> down = new TreeMap<>(before.down());
        down.remove(id);
        return before.withTable(members, down, before.candidates(), ClusterConfig.Leading.KEEP);
    }

    /** The first long of a snapshot of this format; an older snapshot starts with its epoch instead. */
    static final long SNAPSHOT_MAGIC = 0x4B5654434F4E4632L; // "KVTCONF2"

    @Override
    public void writeContentTo(DataOutput out) throws Exception {
        ClusterConfig c = current;
        out.writeLong(SNAPSHOT_MAGIC);
        out.writeLong(c.epoch());
        out.writeInt(c.replicas());
        out.writeInt(c.members().size());
        for (ClusterConfig.Active a : c.members().values()) {
            writeMember(out, a.member());
            out.writeLong(a.incarnation());
            out.writeLong(a.includedEpoch());
            out.writeLong(a.confirmedEpoch());
            out.writeLong(a.renewals());
            out.writeInt(a.importing());
            writeSlots(out, a.complete());
        }
        out.writeInt(c.down().size());
        for (ClusterConfig.Down d : c.down().values()) {
            writeMember(out, d.member());
            out.writeLong(d.sinceEpoch());
            out.writeBoolean(d.stopped());
        }
        out.writeInt(c.candidates().size());
        for (ClusterConfig.Candidate k : c.candidates().values()) {
            writeMember(out, k.member());
            out.writeLong(k.incarnation());
            out.writeLong(k.appliedEpoch());
        }
        for (long since : c.primarySince()) {
            out.writeLong(since);
        }
        out.writeLong(c.firstEpoch());
        for (long complete : c.completeEpoch()) {
            out.writeLong(complete);
        }
        // Who leads each slot: the table is no function of the members alone (a leader stays while it is up).
        List<Member> active = c.activeMembers();
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            Member leader = c.table().isOwned() ? c.table().primary(s) : null;
            out.writeShort(leader == null ? -1 : active.indexOf(leader));
        }
    }

    @Override
    public void readContentFrom(DataInput in) throws Exception {
        long first = in.readLong();
        boolean legacy = first != SNAPSHOT_MAGIC; // a snapshot of the version before down members: no down, no leaders
        long epoch = legacy ? first : in.readLong();
        int replicas = in.readInt();
        Map<String, ClusterConfig.Active> members = new HashMap<>();
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            Member m = readMember(in);
            members.put(m.id(), new ClusterConfig.Active(m, in.readLong(), in.readLong(), in.readLong(),
                    in.readLong(), in.readInt(), readSlots(in)));
        }
        Map<String, ClusterConfig.Down> down = new HashMap<>();
        if (!legacy) {
            n = in.readInt();
            for (int i = 0; i < n; i++) {
                Member m = readMember(in);
                down.put(m.id(), new ClusterConfig.Down(m, in.readLong(), in.readBoolean()));
            }
        }
        Map<String, ClusterConfig.Candidate> candidates = new HashMap<>();
        n = in.readInt();
        for (int i = 0; i < n; i++) {
            Member m = readMember(in);
            candidates.put(m.id(), new ClusterConfig.Candidate(m, in.readLong(), in.readLong()));
        }
        long[] since = new long[SlotHash.SLOTS];
        for (int s = 0; s < since.length; s++) {
            since[s] = in.readLong();
        }
        long firstEpoch = in.readLong();
        long[] complete = new long[SlotHash.SLOTS];
        for (int s = 0; s < complete.length; s++) {
            complete[s] = in.readLong();
        }
        Map<String, Member> placed = new TreeMap<>();
        members.values().forEach(a -> placed.put(a.member().id(), a.member()));
        down.values().forEach(d -> placed.put(d.member().id(), d.member()));
        List<Member> active = new ArrayList<>();
        new TreeMap<>(members).values().forEach(a -> active.add(a.member()));
        int[] leaders = new int[SlotHash.SLOTS];
        java.util.Arrays.fill(leaders, -1);
        if (!legacy) {
            for (int s = 0; s < leaders.length; s++) {
                leaders[s] = in.readShort();
            }
        }
        SlotTable placement = Placement.placement(new ArrayList<>(placed.values()), Math.max(0, replicas));
        SlotTable table = Placement.serve(epoch, placement, members.keySet(), (slot, upOwners) ->
                leaders[slot] >= 0 && leaders[slot] < active.size() ? active.get(leaders[slot]).id() : null);
        ClusterConfig c = new ClusterConfig(epoch, replicas, members, down, candidates, table, since, firstEpoch,
                complete);
        long now = System.nanoTime(); // a snapshot says nothing of when renewals came: count from now, the safe side
        renewedAtNanos.clear();
        members.keySet().forEach(id -> renewedAtNanos.put(id, now));
        current = c;
        listener.accept(c);
    }

    private static void writeMember(DataOutput out, Member m) throws IOException {
        out.writeUTF(m.id());
        out.writeLong(m.weight());
        out.writeUTF(m.endpoint());
    }

    /** {@code slots} as ranges of consecutive slots: their count, then each one's first and last slot. */
    private static void writeSlots(DataOutput out, BitSet slots) throws IOException {
        List<int[]> ranges = new ArrayList<>();
        for (int s = slots.nextSetBit(0); s >= 0; ) {
            int end = slots.nextClearBit(s);
            ranges.add(new int[] {s, end - 1});
            s = slots.nextSetBit(end);
        }
        out.writeInt(ranges.size());
        for (int[] r : ranges) {
            out.writeShort(r[0]);
            out.writeShort(r[1]);
        }
    }

    private static BitSet readSlots(DataInput in) throws IOException {
        BitSet slots = new BitSet(SlotHash.SLOTS);
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            int first = in.readUnsignedShort();
            int last = in.readUnsignedShort();
            if (first > last || last >= SlotHash.SLOTS) {
                throw new IOException("bad slot range " + first + "-" + last);
            }
            slots.set(first, last + 1);
        }
        return slots;
    }

    private static Member readMember(DataInput in) throws IOException {
        return new Member(in.readUTF(), in.readLong(), in.readUTF());
    }

    // ---- command encoding ----

    static byte[] setup(int replicas) {
        return encode(out -> {
            out.writeByte(SETUP);
            out.writeInt(replicas);
        });
    }

    static byte[] renew(Member self, long incarnation, long appliedEpoch, BitSet importing) {
        return encode(out -> {
            out.writeByte(RENEW);
            out.writeUTF(self.id());
            out.writeLong(incarnation);
            out.writeLong(appliedEpoch);
            out.writeLong(self.weight());
            out.writeUTF(self.endpoint());
            writeSlots(out, importing);
        });
    }

    static byte[] include(List<ClusterConfig.Candidate> candidates) {
        return encode(out -> {
            out.writeByte(INCLUDE);
            out.writeInt(candidates.size());
            for (ClusterConfig.Candidate c : candidates) {
                out.writeUTF(c.member().id());
                out.writeLong(c.incarnation());
            }
        });
    }

    static byte[] exclude(String id, long incarnation, long expectedRenewals) {
        return encode(out -> {
            out.writeByte(EXCLUDE);
            out.writeUTF(id);
            out.writeLong(incarnation);
            out.writeLong(expectedRenewals);
        });
    }

    static byte[] stop(String id, long incarnation) {
        return encode(out -> {
            out.writeByte(STOP);
            out.writeUTF(id);
            out.writeLong(incarnation);
        });
    }

    static byte[] forget(String id) {
        return encode(out -> {
            out.writeByte(FORGET);
            out.writeUTF(id);
        });
    }

    static byte[] rebalance() {
        return encode(out -> out.writeByte(REBALANCE));
    }

    static byte[] acceptLoss(long epoch, BitSet slots) {
        return encode(out -> {
            out.writeByte(ACCEPT_LOSS);
            out.writeLong(epoch);
            writeSlots(out, slots);
        });
    }

    static byte[] leave(String id, long incarnation) {
        return encode(out -> {
            out.writeByte(LEAVE);
            out.writeUTF(id);
            out.writeLong(incarnation);
        });
    }

    @FunctionalInterface
    private interface Writer {
        void write(DataOutputStream out) throws IOException;
    }

    private static byte[] encode(Writer writer) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            writer.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // unreachable: in-memory stream
        }
        return bytes.toByteArray();
    }
}
