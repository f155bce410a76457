package io.kvtier.cluster;

import io.kvtier.client.cluster.SlotHash;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An epoch-numbered assignment of each of the {@value SlotHash#SLOTS} slots to an ordered list of at most
 * {@link #copies()} distinct owners, primary first. Immutable and thread-safe; built by {@link Placement#compute}, and
 * by {@link Placement#serve} for the table a cluster serves, whose members are the nodes up now: there a slot lacks
 * the owners that are down (its placement keeps them, ADR 0006), and a slot whose owners are all down has none.
 * A table over no members owns nothing: every slot's owner list is empty.
 */
public final class SlotTable {
    private static final int SLOTS = SlotHash.SLOTS;

    private final long epoch;
    private final List<Member> members;
    private final int replicas;
    private final int copies;
    /**
     * Slot {@code s}'s owners are {@code members[owners[s * copies + k]]} for {@code k < copies}, primary at k = 0;
     * entries of -1 (at the end of a slot's run) are owners that are down.
     */
    private final int[] owners;
    private final Map<Member, Integer> indexOf;
    private final int[] primaryCounts;
    private final int[] ownedCounts;
    private final List<SlotRange> ranges;
    private final List<SlotRange> primaryRanges;

    /** Takes ownership of {@code owners}, which the caller must not change afterwards. */
    SlotTable(long epoch, List<Member> members, int replicas, int[] owners) {
        this(epoch, members, replicas, Math.min(replicas + 1, members.size()), owners);
    }

    /** A table whose slots have at most {@code copies} owners each (-1: none in that place). */
    SlotTable(long epoch, List<Member> members, int replicas, int copies, int[] owners) {
        this.epoch = epoch;
        this.members = List.copyOf(members);
        this.replicas = replicas;
        this.copies = members.isEmpty() ? 0 : copies;
        if (owners.length != SLOTS * copies) {
            throw new IllegalArgumentException("owner array of " + owners.length + " entries, expected "
                    + SLOTS * copies);
        }
        this.owners = owners;
        this.indexOf = new HashMap<>();
        for (int i = 0; i < this.members.size(); i++) {
            indexOf.put(this.members.get(i), i);
        }
        this.primaryCounts = new int[members.size()];
        this.ownedCounts = new int[members.size()];
        for (int i = 0; i < owners.length; i++) {
            if (owners[i] < 0) {
                continue;
            }
            ownedCounts[owners[i]]++;
            if (i % copies == 0) {
                primaryCounts[owners[i]]++;
            }
        }
        this.ranges = mergeRanges(copies);
        this.primaryRanges = mergeRanges(Math.min(copies, 1));
    }

    /** The epoch this table was published under; a newer table has a larger one. */
    public long epoch() {
        return epoch;
    }

    /** The members the table was computed from, sorted by id. */
    public List<Member> members() {
        return members;
    }

    /** The number of backups asked for; a slot has fewer when there are not enough members, see {@link #copies()}. */
    public int replicas() {
        return replicas;
    }

    /**
     * Owners per slot at most: {@code min(replicas + 1, members)} over the members placed (up or down), 0 for an
     * empty membership; a slot has fewer while some of its owners are down.
     */
    public int copies() {
        return copies;
    }

    /**
     * Whether the table has members at all; otherwise the cluster can serve nothing. A slot may still have no owner
     * (all of its owners down): {@link #primary} is then null.
     */
    public boolean isOwned() {
        return copies > 0;
    }

    /** Index in {@link #members} of owner {@code k} of {@code slot} ({@code k < copies()}), or -1 for none there. */
    int ownerIndex(int slot, int k) {
        return owners[slot * copies + k];
    }

    /** The owners of {@code slot}, primary first then backups in failover order; empty if the table owns nothing. */
    public List<Member> owners(int slot) {
        checkSlot(slot);
        List<Member> result = new ArrayList<>(copies);
        for (int k = 0; k < copies; k++) {
            int o = owners[slot * copies + k];
            if (o >= 0) {
                result.add(members.get(o));
            }
        }
        return Collections.unmodifiableList(result);
    }

    /**
     * The primary owner of {@code slot}; null when every owner of it is down.
     *
     * @throws IllegalStateException if the table owns nothing (empty membership): check {@link #isOwned()} first
     */
    public Member primary(int slot) {
        checkSlot(slot);
        if (!isOwned()) {
            throw new IllegalStateException("slot " + slot + " has no owner: the slot table of epoch " + epoch
                    + " has no members");
        }
        int o = owners[slot * copies];
        return o < 0 ? null : members.get(o);
    }

    /** Whether {@code slot} has an owner up (a primary) in this table. */
    public boolean served(int slot) {
        return isOwned() && owners[slot * copies] >= 0;
    }

    /** How many slots have a primary (the others' owners are all down). */
    public int servedSlots() {
        if (!isOwned()) {
            return 0;
        }
        int n = 0;
        for (int slot = 0; slot < SLOTS; slot++) {
            n += owners[slot * copies] >= 0 ? 1 : 0;
        }
        return n;
    }

    /**
     * The slots as maximal ranges of consecutive slots with the same owners (primary and backups, in order), in slot
     * order, leaving out slots with no owner up; empty if the table owns nothing. Computed once per table.
     */
    public List<SlotRange> ranges() {
        return ranges;
    }

    /**
     * The slots as maximal ranges of consecutive slots with the same primary, each range's owners being just that
     * primary, in slot order; empty if the table owns nothing. Computed once per table; fewer ranges than
     * {@link #ranges()}, as backups may change within a primary's range.
     */
    public List<SlotRange> primaryRanges() {
        return primaryRanges;
    }

    /** Merges consecutive slots whose first {@code roles} owners are equal. */
    private List<SlotRange> mergeRanges(int roles) {
        if (roles == 0) {
            return List.of();
        }
        List<SlotRange> merged = new ArrayList<>();
        int start = 0;
        for (int slot = 1; slot <= SLOTS; slot++) {
            if (slot == SLOTS || !Arrays.equals(owners, slot * copies, slot * copies + roles, owners,
                    start * copies, start * copies + roles)) {
                List<Member> rangeOwners = new ArrayList<>(roles);
                for (int k = 0; k < roles; k++) {
                    int o = owners[start * copies + k];
                    if (o >= 0) {
                        rangeOwners.add(members.get(o));
                    }
                }
                if (!rangeOwners.isEmpty()) {
                    merged.add(new SlotRange(start, slot - 1, rangeOwners));
                }
                start = slot;
            }
        }
        return List.copyOf(merged);
    }

    /** The slots {@code member} owns in any role; empty if it is not a member. */
    public BitSet slotsOf(Member member) {
        return slotsOf(member, copies);
    }

    /** The slots whose primary is {@code member}; empty if it is not a member. */
    public BitSet primarySlotsOf(Member member) {
        return slotsOf(member, 1);
    }

    /** How many slots {@code member} is primary of; 0 if it is not a member. */
    public int primaryCount(Member member) {
        Integer index = indexOf.get(member);
        return index == null ? 0 : primaryCounts[index];
    }

    /** How many slots {@code member} owns in any role (primary or backup); 0 if it is not a member. */
    public int ownedCount(Member member) {
        Integer index = indexOf.get(member);
        return index == null ? 0 : ownedCounts[index];
    }

    /**
     * The number of slots whose primary differs between this table and {@code other}, comparing members by id (a
     * weight change alone moves no data). A slot owned in one table and unowned in the other counts as moved.
     */
    public int movedPrimaries(SlotTable other) {
        int moved = 0;
        for (int slot = 0; slot < SLOTS; slot++) {
            if (!Objects.equals(primaryId(slot), other.primaryId(slot))) {
                moved++;
            }
        }
        return moved;
    }

    private String primaryId(int slot) {
        Member p = isOwned() ? primary(slot) : null;
        return p == null ? null : p.id();
    }

    private BitSet slotsOf(Member member, int roles) {
        BitSet slots = new BitSet(SLOTS);
        Integer index = indexOf.get(member);
        if (index != null) {
            for (int slot = 0; slot < SLOTS; slot++) {
                for (int k = 0; k < roles; k++) {
                    if (owners[slot * copies + k] == index) {
                        slots.set(slot);
                    }
                }
            }
        }
        return slots;
    }

    private static void checkSlot(int slot) {
        if (slot < 0 || slot >= SLOTS) {
            throw new IllegalArgumentException("slot " + slot + " is outside 0.." + (SLOTS - 1));
        }
    }

    /**
     * A hash of what decides the placement (replicas and members: ids, weights, endpoints), equal on every JVM: two
     * tables of one epoch published by different coordinators (the two sides of a partition) differ in it.
     */
    public int fingerprint() {
        int h = replicas;
        for (Member m : members) {
            h = 31 * (31 * (31 * h + m.id().hashCode()) + Long.hashCode(m.weight())) + m.endpoint().hashCode();
        }
        return h;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SlotTable t && epoch == t.epoch && replicas == t.replicas && members.equals(t.members)
                && Arrays.equals(owners, t.owners);
    }

    @Override
    public int hashCode() {
        return Objects.hash(epoch, replicas, members) * 31 + Arrays.hashCode(owners);
    }

    @Override
    public String toString() {
        return "SlotTable[epoch=" + epoch + ", members=" + members.size() + ", replicas=" + replicas + ", copies="
                + copies + "]";
    }
}
