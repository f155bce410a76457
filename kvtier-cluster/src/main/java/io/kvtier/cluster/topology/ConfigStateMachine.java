package io.kvtier.cluster.topology;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
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
 *       one is excluded first, once its lease has run out); one new table for all of them.</li>
 *   <li>{@code EXCLUDE id incarnation expectedRenewals}: removes an active member whose lease ran out, if no renewal
 *       committed since the leader saw it expire; a new table.</li>
 *   <li>{@code LEAVE id incarnation}: a member that stopped serving leaves; a new table.</li>
 * </ul>
 * Thread-safe: Raft applies from one thread; readers take {@link #current()}.
 */
public final class ConfigStateMachine implements StateMachine {
    static final byte SETUP = 1;
    static final byte RENEW = 2;
    static final byte INCLUDE = 3;
    static final byte EXCLUDE = 4;
    static final byte LEAVE = 5;
    static final byte[] YES = {1};
    static final byte[] NO = {0};

    private final Consumer<ClusterConfig> listener;
    private final Map<String, Long> renewedAtNanos = new ConcurrentHashMap<>();
    private volatile ClusterConfig current = ClusterConfig.empty();

    /** {@code listener} is told of every new configuration, on Raft's apply thread: keep it short. */
    public ConfigStateMachine(Consumer<ClusterConfig> listener) {
        this.listener = listener;
    }

    public ClusterConfig current() {
        return current;
    }

    /** When this replica applied {@code id}'s newest renewal or its inclusion ({@link System#nanoTime}); null: never. */
    Long renewedAtNanos(String id) {
        return renewedAtNanos.get(id);
    }

    @Override
    public byte[] apply(byte[] data, int offset, int length, boolean serializeResponse) throws Exception {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(data, offset, length));
        byte kind = in.readByte();
        ClusterConfig before = current;
        ClusterConfig after;
        boolean yes;
        switch (kind) {
            case SETUP -> {
                int replicas = in.readInt();
                yes = before.replicas() < 0;
                after = yes ? new ClusterConfig(before.epoch(), replicas, before.members(), before.candidates(),
                        before.table(), before.primarySince(), before.firstEpoch(), before.completeEpoch()) : before;
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
                    after = new ClusterConfig(before.epoch(), before.replicas(), members, before.candidates(),
                            before.table(), before.primarySince(), before.firstEpoch(), before.completeEpoch());
                    if (applied == before.epoch()) {
                        // Its importing slots as of this very table (a report taken under an older one commits
                        // after the newer table, so it fails this test).
                        after = after.reported(id, importingSlots);
                    }
                    renewedAtNanos.put(id, System.nanoTime());
                } else {
                    yes = false;
                    ClusterConfig.Candidate known = before.candidates().get(id);
                    long caughtUp = Math.min(applied, before.epoch());
                    if (known != null && known.incarnation() == incarnation && known.member().equals(member)
                            && known.appliedEpoch() == caughtUp) {
                        after = before;
                    } else {
                        Map<String, ClusterConfig.Candidate> candidates = new TreeMap<>(before.candidates());
                        candidates.put(id, new ClusterConfig.Candidate(member, incarnation, caughtUp));
                        after = new ClusterConfig(before.epoch(), before.replicas(), before.members(), candidates,
                                before.table(), before.primarySince(), before.firstEpoch(), before.completeEpoch());
                    }
                }
            }
            case INCLUDE -> {
                int n = in.readInt();
                Map<String, ClusterConfig.Active> members = new TreeMap<>(before.members());
                Map<String, ClusterConfig.Candidate> candidates = new TreeMap<>(before.candidates());
                for (int i = 0; i < n; i++) {
                    String id = in.readUTF();
                    long incarnation = in.readLong();
                    ClusterConfig.Candidate c = candidates.get(id);
                    if (c != null && c.incarnation() == incarnation && !members.containsKey(id)) {
                        candidates.remove(id);
                        members.put(id, new ClusterConfig.Active(c.member(), incarnation, before.epoch() + 1, 0, 0,
                                ClusterConfig.Active.NOT_REPORTED, new BitSet()));
                        renewedAtNanos.put(id, System.nanoTime());
                    }
                }
                yes = before.replicas() >= 0 && members.size() > before.members().size();
                after = yes ? before.withTable(members, candidates) : before;
            }
            case EXCLUDE -> {
                String id = in.readUTF();
                long incarnation = in.readLong();
                long expected = in.readLong();
                ClusterConfig.Active a = before.members().get(id);
                yes = a != null && a.incarnation() == incarnation && a.renewals() == expected;
                after = yes ? without(before, id) : before;
            }
            case LEAVE -> {
                String id = in.readUTF();
                long incarnation = in.readLong();
                ClusterConfig.Active a = before.members().get(id);
                yes = a != null && a.incarnation() == incarnation;
                after = yes ? without(before, id) : before;
            }
            default -> throw new IllegalArgumentException("unknown configuration command kind " + kind);
        }
        if (after != before) {
            current = after;
            listener.accept(after);
        }
        return yes ? YES : NO;
    }

    private static ClusterConfig without(ClusterConfig before, String id) {
        Map<String, ClusterConfig.Active> members = new TreeMap<>(before.members());
        members.remove(id);
        return before.withTable(members, before.candidates());
    }

    @Override
    public void writeContentTo(DataOutput out) throws Exception {
        ClusterConfig c = current;
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
    }

    @Override
    public void readContentFrom(DataInput in) throws Exception {
        long epoch = in.readLong();
        int replicas = in.readInt();
        Map<String, ClusterConfig.Active> members = new HashMap<>();
        int n = in.readInt();
        for (int i = 0; i < n; i++) {
            Member m = readMember(in);
            members.put(m.id(), new ClusterConfig.Active(m, in.readLong(), in.readLong(), in.readLong(),
                    in.readLong(), in.readInt(), readSlots(in)));
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
        List<Member> active = new ArrayList<>();
        new TreeMap<>(members).values().forEach(a -> active.add(a.member()));
        ClusterConfig c = new ClusterConfig(epoch, replicas, members, candidates,
                Placement.compute(epoch, active, Math.max(0, replicas)), since, firstEpoch, complete);
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
