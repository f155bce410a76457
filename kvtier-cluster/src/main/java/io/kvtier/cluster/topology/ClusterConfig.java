package io.kvtier.cluster.topology;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import io.kvtier.cluster.SlotTable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The cluster's configuration as the Raft log has it after some prefix of committed commands: the replicated state of
 * {@link ConfigStateMachine}. Immutable; every applied command yields a new one. See ADR 0005.
 *
 * <ul>
 *   <li>{@code members}: the active members, by id, with the incarnation (one process lifetime) that is active, the
 *       epoch it was included at, the newest table epoch it confirmed having applied, and how many lease renewals of
 *       it were committed. Only active members own slots.</li>
 *   <li>{@code candidates}: processes that asked to be members (a renewal from an incarnation that is not active) and
 *       have not been included yet.</li>
 *   <li>{@code epoch}: the number of table changes committed so far; unique per table, since only the log changes
 *       it.</li>
 *   <li>{@code primarySince[slot]}: the epoch from which the slot's current primary (that id and incarnation) has
 *       been its primary without a break. The primary serves the slot once every other active member is known to be
 *       past that epoch ({@link #fence}): none of them can still serve it under an older table.</li>
 *   <li>{@code completeEpoch[slot]}: the newest epoch at which the log knows some owner of the slot held all of its
 *       data: one whose renewal at that epoch did not list the slot among those it still imports
 *       ({@link Active#complete}), or that was such an owner at the epoch before and stayed one. A write is acknowledged only at an epoch the slot
 *       is complete at (that owner receives it too, replication being synchronous), so a copy stamped complete at
 *       this epoch or later holds every acknowledged write of the slot: the importers' rule for a source, whoever is
 *       within reach (ADR 0005).</li>
 * </ul>
 *
 * @param epoch        table changes so far, 0 before the first
 * @param replicas     backups per slot, -1 until the first leader set it
 * @param members      active members by id, sorted
 * @param down         members whose process is gone (excluded, or stopped) but whose slots stay theirs: placed, not
 *                     serving, by id, sorted (ADR 0006)
 * @param candidates   would-be members by id, sorted
 * @param table        the slot table served at {@code epoch}: the placement of every member (active and down), each
 *                     slot's owners that are active, one of them leading (see {@link Placement#serve})
 * @param primarySince per slot, see above; shared between configurations of one epoch, never written
 * @param firstEpoch   the epoch of the first table with members, 0 before it
 * @param completeEpoch per slot, see above; shared between configurations, never written (a change copies it)
 */
public record ClusterConfig(long epoch, int replicas, Map<String, Active> members, Map<String, Down> down,
                            Map<String, Candidate> candidates, SlotTable table, long[] primarySince, long firstEpoch,
                            long[] completeEpoch) {
    /**
     * {@link #completeEpoch} of a slot whose loss an operator accepted (ACCEPT-LOSS): no copy complete at its newest
     * complete epoch is left, and its importers merge the best copies that survive (those of the newest epoch any
     * holder has, clean or not) instead of waiting for one that will not come back.
     */
    public static final long LOSS_ACCEPTED = -1;

    /**
     * An active member; {@code importing} is how many slots it reported still importing with its latest renewal, or
     * {@link #NOT_REPORTED} until its first renewal after its inclusion (the leader includes no one while a member
     * imports or has not reported: a node included again drops its copies, which may be the only complete ones of
     * slots still being imported, and a table that came before the first table's slots were complete would find no
     * complete copy of them anywhere, for ever). {@code complete}: the slots it owns in this table that the log knows
     * it holds all the data of (see {@code completeEpoch}); never written once made.
     */
    public record Active(Member member, long incarnation, long includedEpoch, long confirmedEpoch, long renewals,
                         int importing, BitSet complete) {
        /** {@code importing} of a member just included: unknown, taken as importing. */
        public static final int NOT_REPORTED = -1;

        /** The epoch this member is known to be past: no table older than this can be served by it any more. */
        public long fence() {
            return Math.max(includedEpoch, confirmedEpoch);
        }

        Active withComplete(BitSet now) {
            return now.equals(complete) ? this
                    : new Active(member, incarnation, includedEpoch, confirmedEpoch, renewals, importing, now);
        }
    }

    /**
     * A member placed but not serving: its process was excluded (its lease ran out: a crash, a pause, a partition) or
     * stopped gracefully ({@code stopped}). Its slots stay its own in the placement, served by their other owners, and
     * come back to it when a process of its id is included again; only FORGET (an operator, or a member down for
     * {@code --down-after}) or LEAVE gives them to others.
     *
     * @param sinceEpoch the epoch of the table that took it down
     */
    public record Down(Member member, long sinceEpoch, boolean stopped) {
    }

    /** How a new table picks the member that leads each slot among its owners that are up. */
    enum Leading {
        /**
         * The slot's leader so far if it is still up and an owner; else the first owner known complete for it (that
         * confirmed so, at this epoch); else the first in placement order. A member back from down, or a joiner,
         * leads nothing until a REBALANCE finds it complete.
         */
        KEEP,
        /** The first owner in placement order where it is known complete for the slot; the leader so far elsewhere. */
        REBALANCE
    }

    /** A process that asked to join, and the newest table epoch it had applied when it last asked. */
    public record Candidate(Member member, long incarnation, long appliedEpoch) {
    }

    public ClusterConfig {
        members = Collections.unmodifiableMap(new TreeMap<>(members));
        down = Collections.unmodifiableMap(new TreeMap<>(down));
        candidates = Collections.unmodifiableMap(new TreeMap<>(candidates));
    }

    /** The configuration before the first command: no members, nothing owned. */
    public static ClusterConfig empty() {
        return new ClusterConfig(0, -1, Map.of(), Map.of(), Map.of(), Placement.compute(0, List.of(), 0),
                new long[SlotHash.SLOTS], 0, new long[SlotHash.SLOTS]);
    }

    /**
     * Whether {@code epoch}'s table is the cluster's first with members: its slots were never held by anyone, so an
     * owner that finds no complete copy anywhere has nothing to import. In any later table a slot with no complete
     * copy within reach is one whose holders are away, not an empty one.
     */
    public boolean firstTable(long epoch) {
        return epoch == firstEpoch;
    }

    /** The active members' {@link Member}s, sorted by id: the members of the served table. */
    public List<Member> activeMembers() {
        List<Member> out = new ArrayList<>(members.size());
        members.values().forEach(a -> out.add(a.member()));
        return out;
    }

    /** Every member placed, active or down, sorted by id: what the placement is computed over. */
    public List<Member> placedMembers() {
        Map<String, Member> all = new TreeMap<>();
        members.values().forEach(a -> all.put(a.member().id(), a.member()));
        down.values().forEach(d -> all.put(d.member().id(), d.member()));
        return new ArrayList<>(all.values());
    }

    /** Whether {@code id} is active as incarnation {@code incarnation}. */
    public boolean isActive(String id, long incarnation) {
        Active a = members.get(id);
        return a != null && a.incarnation() == incarnation;
    }

    /**
     * The lowest {@link Active#fence} among the active members other than {@code id}: {@code id} may serve as primary
     * every slot whose {@code primarySince} is at most this. {@code Long.MAX_VALUE} when it is alone.
     */
    public long fence(String id) {
        long min = Long.MAX_VALUE;
        for (Active a : members.values()) {
            if (!a.member().id().equals(id)) {
                min = Math.min(min, a.fence());
            }
        }
        return min;
    }

    /**
     * A table at the next epoch over {@code active} and {@code gone} (see {@link Placement#serve}; {@code leading} says
     * which owner leads each slot), with {@code primarySince} carried over where primaries stay. No member is complete
     * at the new epoch until it says so, having applied the table (its renewal, {@link #reported}): carrying
     * completeness over to members that never applied it let a chain of exclusions mark dead members complete at epochs
     * whose stamps no disk holds, and a full restart then found no copy fresh enough anywhere (issue 28). In the
     * cluster's first table every slot is complete: nobody ever held any.
     */
    ClusterConfig withTable(Map<String, Active> active, Map<String, Down> gone, Map<String, Candidate> waiting,
                            Leading leading) {
        long next = epoch + 1;
        Map<String, Member> placed = new TreeMap<>();
        active.values().forEach(a -> placed.put(a.member().id(), a.member()));
        gone.values().forEach(d -> placed.put(d.member().id(), d.member()));
        SlotTable placement = Placement.placement(new ArrayList<>(placed.values()), Math.max(0, replicas));
        // The members that stay the same process, and the slots each is complete for, looked up once rather than by
        // name for each of the 16,384 slots: this runs on Raft's apply thread, cold, where every millisecond delays
        // every lease renewal behind it.
        Map<String, BitSet> staying = new java.util.HashMap<>();
        for (Map.Entry<String, Active> e : active.entrySet()) {
            Active now = members.get(e.getKey());
            if (now != null && now.incarnation() == e.getValue().incarnation()) {
                staying.put(e.getKey(), now.complete());
            }
        }
        SlotTable nextTable = Placement.serve(next, placement, active.keySet(), (slot, upOwners) -> {
            Member leader = table.isOwned() ? table.primary(slot) : null;
            if (leading == Leading.REBALANCE && completeHere(staying, upOwners.getFirst(), slot)) {
                return upOwners.getFirst().id();
            }
            if (leader != null && staying.containsKey(leader.id())) {
                return leader.id();
            }
            for (Member m : upOwners) {
                if (completeHere(staying, m, slot)) {
                    return m.id();
                }
            }
            return null;
        });
        long[] since = new long[SlotHash.SLOTS];
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            Member before = table.isOwned() ? table.primary(s) : null;
            Member after = nextTable.isOwned() ? nextTable.primary(s) : null;
            boolean same = before != null && after != null && before.id().equals(after.id())
                    && staying.containsKey(before.id());
            since[s] = same ? primarySince[s] : next;
        }
        long first = firstEpoch != 0 || active.isEmpty() ? firstEpoch : next;
        boolean founding = first == next;
        long[] complete = completeEpoch.clone();
        Map<String, Active> marked = new TreeMap<>();
        for (Active a : active.values()) {
            marked.put(a.member().id(), a.withComplete(founding ? nextTable.slotsOf(a.member()) : new BitSet()));
        }
        if (founding) {
            Arrays.fill(complete, next);
        }
        return new ClusterConfig(next, replicas, marked, gone, waiting, nextTable, since, first, complete);
    }

    /** Whether {@code m}, the same process in the next table ({@code staying}), is complete for {@code slot} now. */
    private static boolean completeHere(Map<String, BitSet> staying, Member m, int slot) {
        BitSet complete = staying.get(m.id());
        return complete != null && complete.get(slot);
    }

    /**
     * Whether a REBALANCE now would move the lead of some slot to its first owner in placement order, which is
     * complete for it: a member back from down, or a joiner, that finished importing.
     */
    public boolean rebalanceWanted() {
        return rebalanced() != null;
    }

    /** The configuration a REBALANCE makes of this one, or null if it would move the lead of no slot. */
    ClusterConfig rebalanced() {
        if (!table.isOwned() || members.isEmpty()) {
            return null;
        }
        ClusterConfig next = withTable(members, down, candidates, Leading.REBALANCE);
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            Member a = table.primary(s);
            Member b = next.table().primary(s);
            if (a != null && b != null && !a.id().equals(b.id())) {
                return next;
            }
        }
        return null;
    }

    /**
     * What {@link #rebalanceWanted} depends on: the epoch (members, their processes and the table change only with
     * it) and what each member is complete for. Two configurations with equal inputs give the same answer, so callers
     * work it out again only when these change, not at every renewal.
     */
    public List<Object> rebalanceInputs() {
        List<Object> key = new ArrayList<>(members.size() + 1);
        key.add(epoch);
        members.values().forEach(a -> key.add(a.complete()));
        return key;
    }

    /**
     * This configuration after {@code id} (active) reported, under this epoch's table, the slots it is still
     * importing: it is complete for the others it owns, and so are they, at this epoch. Itself if nothing changed.
     */
    ClusterConfig reported(String id, BitSet importing) {
        Active a = members.get(id);
        if (a == null) {
            return this;
        }
        BitSet now = table.slotsOf(a.member());
        now.andNot(importing);
        now.or(a.complete()); // completeness within a table is never taken back
        if (now.equals(a.complete())) {
            return this;
        }
        long[] complete = completeEpoch.clone();
        for (int s = now.nextSetBit(0); s >= 0; s = now.nextSetBit(s + 1)) {
            complete[s] = epoch;
        }
        Map<String, Active> marked = new TreeMap<>(members);
        marked.put(id, a.withComplete(now));
        return new ClusterConfig(epoch, replicas, marked, down, candidates, table, primarySince, firstEpoch, complete);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterConfig c && epoch == c.epoch && replicas == c.replicas && firstEpoch == c.firstEpoch
                && members.equals(c.members) && down.equals(c.down)
                && candidates.equals(c.candidates) && Arrays.equals(primarySince, c.primarySince)
                && Arrays.equals(completeEpoch, c.completeEpoch);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(epoch) * 31 + members.hashCode();
    }

    @Override
    public String toString() {
        return "epoch " + epoch + " members " + members.keySet() + " down " + down.keySet() + " candidates "
                + candidates.keySet();
    }
}
