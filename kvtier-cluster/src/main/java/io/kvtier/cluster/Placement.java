package io.kvtier.cluster;

import io.kvtier.client.cluster.SlotHash;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/*
 * Slot placement: from a membership, the owners of each of the 16384 slots.
 *
 * Design. Every node must derive the same table from the same view; a view change must move as little data as possible,
 * in proportion to capacity; and the slots must come in few ranges of consecutive slots with one primary, because every
 * cluster client reads CLUSTER SLOTS (one entry per range) at start and after each MOVED. Placing each slot on its own,
 * as rendezvous hashing does [Thaler & Ravishankar, "Using name-based mappings to increase hit rates", IEEE/ACM ToN
 * 6(1), 1998], gives ~14,000 ranges for 3 nodes (a 2.3 MB reply; Redis's is 292 bytes for three masters), and fixed
 * groups of slots trade ranges for balance (1024 groups still give ~680 ranges for 3 nodes, and few groups cannot
 * share 16384 slots within 10% among 64 nodes of weight 1..4). So slots are placed by position instead.
 *
 * Anchors. Slots lie on a ring (16383 next to 0). Each member has 24 anchors, real positions on the ring drawn from a
 * hash of its id and the anchor's number alone, so a member's anchors never depend on who else is in the view. A slot's
 * members rank by (distance from the slot's centre to the member's nearest anchor) / weight, smallest first: the slot's
 * primary is the first, its backups the next ones. This is a multiplicatively weighted nearest-neighbour (Voronoi)
 * partition of the ring; in one dimension each anchor wins an interval, or two when a heavier anchor reaches round a
 * lighter one, so the primaries come in about as many ranges as there are anchors.
 *
 * Why it is fair and moves little. It is rendezvous hashing with spatially correlated scores: a slot's key for member m
 * is the smallest of d_k / w_m over m's anchors k. Were each member's anchors a Poisson process of the same density,
 * the values d / w_m seen from any one slot would form a Poisson process of intensity proportional to w_m (the mapping
 * theorem), so the smallest key overall belongs to m with probability exactly w_m / W, as with the exponential race of
 * weighted rendezvous hashing [Schindelhauer & Schomaker, "Weighted distributed hash tables", SPAA 2005]. And as there,
 * the keys of a pair (slot, member) depend on nothing else, so a joining member takes only the slots where its key is
 * best and a leaving member gives up only its own; weights only enter as ratios of keys, so no reference weight (the
 * mean, the largest) is needed. (Giving heavier members more anchors instead needs one, and a joiner of unusual weight
 * then changes every member's anchor count: we measured 10-16% of the slots moving needlessly for 2-6 members in a
 * prototype.) With 24 fixed anchors per member the ranges grow linearly with N: about 24 per member.
 *
 * Bounded loads. A member's count of primaries is the sum of a few dozen random cells, so untuned it deviates far more
 * than per-slot hashing does (up to 1.55x its share for equal weights and 1.66x for weights 1..4 over the property
 * tests). A node's share of slots is its share of data and traffic, so, as in "Consistent Hashing with Bounded Loads"
 * [Mirrokni, Thorup & Zadimoghaddam, SODA 2018] but with a lower bound too, every member is kept within 1 +- eps of its
 * weighted share, eps = 0.05 (floor and ceiling of the bounds). The tool is a per-member stretch that multiplies its
 * weight in the keys; a member's expected share is proportional to weight * stretch, so rounds of "multiply the stretch
 * of each member outside its bounds by a root of target / load" converge in a few rounds (at most 200, then the table
 * is taken as it is; the property tests never get there). Members within their bounds keep stretch 1 and the target
 * lies just inside the bound that was broken, so only the part of the random imbalance beyond eps is corrected;
 * stretching moves a member's boundaries only, so it adds no ranges. The price is movement beyond the minimum: a view
 * change re-draws everybody's imbalance (the joiner takes a random number of cells from each member, a leaver's cells
 * go to random neighbours), so the corrections change; PlacementMovementTest measures it at up to 4.3% of the slots
 * (HRW per slot, before: ~1%).
 *
 * Backups. Once every slot has its primary, a second pass gives each slot the next distinct members of its ranking
 * (with the tuned stretches) whose total ownership (all their primaries plus the backups so far) is below (1 + eps)
 * times their share of all copies. Counting every primary up front, not just those of earlier slots, keeps a member
 * that filled up on backups from overshooting its cap with later primaries. Shares of copies are proportional to
 * weight, except that no member can hold two copies of a slot: a member whose proportional share exceeds 16384 copies
 * is held at 16384 and the excess is shared among the rest by weight (water-filling). Greedy in slot order can still
 * corner itself when a slot needs most of the members (replicas + 1 close to N, unequal weights): the top k of a
 * weighted ranking are flatter than the weights (light members make it in more often than their share), so light
 * members reach their caps early and the last slots find fewer members under cap than they need owners. So the pass
 * keeps the caps feasible: with r slots left, member i can still take min(room_i, r - its primaries ahead) backups, the
 * slots need replicas * r, and the surplus drops by one for every "tight" member (one that could back up every
 * remaining slot it is not primary of) left out of a slot, so when the surplus no longer covers the tight members, the
 * slot takes tight members before others, still in rank order. Only if the caps cannot be met at all does a slot fall
 * back to plain rank order, so it always gets its owners. Primaries never look at backups: changing the number of
 * replicas moves no primary. The ranking changes only where some member's nearest anchor changes, so owner lists also
 * come in ranges, about twice as many as the primaries with one or two replicas.
 *
 * Determinism. The table is a function of the member set: members are sorted by id before anything else, anchors derive
 * only from ids through fixed integer hashes, ties rank by member index (id order), and the arithmetic is IEEE-754
 * additions, multiplications, divisions and square roots, which Java rounds identically on every JVM and CPU (no
 * Math.log or Math.pow, which may differ by an ulp between platforms and make two nodes disagree on a near-tie).
 *
 * Figures (PlacementRunsTest, PlacementBalanceTest, PlacementMovementTest, PlacementTest; 20 or 200 random
 * memberships). Primary ranges, mean / max over 20 memberships, equal weights | weights 1..4x: 2 members 27/31 | 29/37;
 * 3 members 52/55 | 61/73 (CLUSTER SLOTS ~5-7 KB); 5: 105/113 | 120/134; 8: 184/200 | 205/217; 16: 389/407 | 432/459;
 * 64: 1595/1616 | 1755/1805; at most 28 per member over 200 memberships of 1..64 members. Owner-list ranges with 2
 * replicas, max: 3 members 87 | 103; 16: 1056 | 1200; 64: 4091 | 4511. Balance: primaries at most 1.059x of the
 * weighted share (at least 0.950x for equal weights, N <= 16), all copies at most 1.058x. Movement beyond the minimum:
 * join 4.1% (equal) and 4.3% (weighted) of the slots at most, leave 3.7% and 3.9%.
 *
 * Limits. An empty membership gives a table that owns nothing (the server answers -CLUSTERDOWN). With fewer members
 * than replicas + 1, every member owns every slot. Cost is O(16384 * N) per tuning round (each slot compares every
 * member's distance), a few rounds, plus O(16384 * N * k) for the backups, k the ranks inspected per slot: about 18 ms
 * for 64 members and 2 replicas (rendezvous hashing per slot took ~50 ms), and 16384 * N distances in memory (8 MB for
 * 64 members) while it runs.
 */

/**
 * Computes slot tables from capacity-weighted anchors on the ring of slots, with bounded loads. A pure function: the
 * same member set, in any order, always gives an equal table.
 */
public final class Placement {
    /**
     * eps of the bounded loads: every member is primary of 0.95..1.05 times its weighted share of the slots (rounded
     * outwards), and holds at most 1.05 times its share of all copies (rounded up).
     */
    static final double LOAD_BOUND = 1.05;
    private static final int SLOTS = SlotHash.SLOTS;

    private final int copies;
    private final AnchorRing ring;
    private final AnchorRing.Ranking ranking;
    private final double[] primaryShares;
    private final double loadBound;
    private final int[] ownedCaps;
    private final int[] primaryCounts;
    private final int[] ownedCounts;
    private final int[] owners;
    /** Tight members the current slot must still take as backups; see {@link #tightNeeded}. */
    private int tightNeeded;

    private Placement(List<Member> sorted, int replicas, double loadBound) {
        int n = sorted.size();
        this.copies = Math.min(replicas + 1, n);
        this.ring = new AnchorRing(sorted);
        this.ranking = ring.ranking();
        this.primaryShares = shares(sorted, 1);
        this.loadBound = loadBound;
        this.ownedCaps = caps(shares(sorted, copies), loadBound);
        this.primaryCounts = new int[n];
        this.ownedCounts = new int[n];
        this.owners = new int[SLOTS * copies];
    }

    /**
     * The slot table of {@code members} with {@code replicas} backups per slot (fewer if there are not enough
     * members), published as {@code epoch}.
     *
     * @throws IllegalArgumentException if {@code replicas} is negative or two members share an id
     */
    public static SlotTable compute(long epoch, List<Member> members, int replicas) {
        return compute(epoch, members, replicas, LOAD_BOUND);
    }

    /** The last few placements computed by {@link #placement}, by member set (sorted) and replicas. */
    private static final java.util.Map<List<Object>, SlotTable> RECENT = new java.util.LinkedHashMap<>(16, 0.75f,
            true) {
        @Override
        protected boolean removeEldestEntry(java.util.Map.Entry<List<Object>, SlotTable> eldest) {
            return size() > 8;
        }
    };

    /**
     * The placement of {@code members} with {@code replicas} backups, to {@link #serve} from: {@link #compute} but
     * remembered for the last few member sets, as the same one is asked for again and again (every table served from
     * it, a rebalance, the rebalance check of CLUSTER INFO and of the leader) and its cost is paid on Raft's apply
     * thread, where a cold JVM on a loaded machine took up to 300 ms for it. Its epoch is that of the first call: serve
     * gives the table its own.
     */
    public static SlotTable placement(List<Member> members, int replicas) {
        List<Member> sorted = sortedById(members);
        List<Object> key = new ArrayList<>(sorted);
        key.add(replicas);
        synchronized (RECENT) {
            SlotTable known = RECENT.get(key);
            if (known != null) {
                return known;
            }
        }
        SlotTable computed = compute(0, sorted, replicas);
        synchronized (RECENT) {
            RECENT.put(key, computed);
        }
        return computed;
    }

    /**
     * As {@link #compute(long, List, int)} with another load bound; {@code POSITIVE_INFINITY} leaves the anchors
     * untuned.
     */
    static SlotTable compute(long epoch, List<Member> members, int replicas, double loadBound) {
        if (replicas < 0) {
            throw new IllegalArgumentException("--replicas " + replicas + " must be at least 0");
        }
        List<Member> sorted = sortedById(members);
        if (sorted.isEmpty()) {
            return new SlotTable(epoch, sorted, replicas, new int[0]);
        }
        Placement placement = new Placement(sorted, replicas, loadBound);
        placement.assignPrimaries();
        placement.assignBackups();
        return new SlotTable(epoch, sorted, replicas, placement.owners);
    }

    /** Which up owner of a slot leads it in a served table; see {@link #serve}. */
    @FunctionalInterface
    public interface Leader {
        /** The id of the owner to lead {@code slot} among {@code upOwners} (placement order), or null for the first. */
        String of(int slot, List<Member> upOwners);
    }

    /**
     * The table a cluster serves at {@code epoch}: its members are the {@code up} ones among {@code placement}'s (which
     * places every member, up or down, ADR 0006), and each slot's owners are its placement owners that are up, in
     * placement order, except that the one {@code leader} names leads (comes first). A slot whose owners are all down
     * has none. Nothing moves while a member is down: it gets its slots back when it is up again.
     */
    public static SlotTable serve(long epoch, SlotTable placement, java.util.Set<String> up, Leader leader) {
        List<Member> members = placement.members().stream().filter(m -> up.contains(m.id())).toList();
        int copies = members.isEmpty() ? 0 : placement.copies();
        java.util.Map<String, Integer> index = new java.util.HashMap<>();
        for (int i = 0; i < members.size(); i++) {
            index.put(members.get(i).id(), i);
        }
        // Placement member index -> served member index (-1: down), so that the loop over the slots, which runs cold
        // on Raft's apply thread, looks nothing up by name.
        List<Member> placed = placement.members();
        int[] served = new int[placed.size()];
        for (int i = 0; i < served.length; i++) {
            Integer at = index.get(placed.get(i).id());
            served[i] = at == null ? -1 : at;
        }
        int placedCopies = placement.copies();
        int[] owners = new int[SLOTS * copies];
        java.util.Arrays.fill(owners, -1);
        List<Member> upOwners = new ArrayList<>(copies);
        List<Member> view = java.util.Collections.unmodifiableList(upOwners);
        int[] upServed = new int[placedCopies]; // served index of each of upOwners
        for (int slot = 0; slot < SLOTS && copies > 0; slot++) {
            upOwners.clear();
            for (int k = 0; k < placedCopies; k++) {
                int o = placement.ownerIndex(slot, k);
                if (o >= 0 && served[o] >= 0) {
                    upServed[upOwners.size()] = served[o];
                    upOwners.add(placed.get(o));
                }
            }
            String named = upOwners.isEmpty() ? null : leader.of(slot, view);
            int first = -1;
            for (int k = 0; named != null && k < upOwners.size(); k++) {
                if (upOwners.get(k).id().equals(named)) {
                    first = k;
                }
            }
            int base = slot * copies;
            int next = 0;
            if (first >= 0) {
                owners[base + next++] = upServed[first];
            }
            for (int k = 0; k < upOwners.size(); k++) {
                if (k != first) {
                    owners[base + next++] = upServed[k];
                }
            }
        }
        return new SlotTable(epoch, members, placement.replicas(), copies, owners);
    }

    /** Pass 1: every slot's primary, from the anchor ring balanced within the load bound. */
    private void assignPrimaries() {
        int[] lo = new int[primaryShares.length];
        int[] hi = new int[primaryShares.length];
        for (int m = 0; m < lo.length; m++) {
            lo[m] = (int) Math.max(0, Math.floor((2 - loadBound) * primaryShares[m]));
            hi[m] = (int) Math.min(SLOTS, Math.ceil(loadBound * primaryShares[m]));
        }
        int[] primary = ring.balancePrimaries(lo, hi);
        for (int slot = 0; slot < SLOTS; slot++) {
            owners[slot * copies] = primary[slot];
            primaryCounts[primary[slot]]++;
            ownedCounts[primary[slot]]++;
        }
    }

    /** Pass 2: every slot's backups, by rank under the ownership caps, which already count all primaries. */
    private void assignBackups() {
        if (copies == 1) {
            return;
        }
        int[] primariesAhead = primaryCounts.clone();
        for (int slot = 0; slot < SLOTS; slot++) {
            ranking.rank(slot);
            int base = slot * copies;
            tightNeeded = tightNeeded(slot, owners[base], primariesAhead);
            primariesAhead[owners[base]]--;
            for (int k = 1; k < copies; k++) {
                owners[base + k] = pickBackup(slot, base, k, primariesAhead);
                ownedCounts[owners[base + k]]++;
            }
        }
    }

    /**
     * The best-ranked member not yet among the slot's first {@code chosen} owners that is tight, or below its cap
     * while enough positions remain for the tight members still needed; failing both, the best-ranked one.
     */
    private int pickBackup(int slot, int base, int chosen, int[] primariesAhead) {
        int positionsLeft = copies - chosen;
        int fallback = -1;
        for (int position = 0; position < ranking.size(); position++) {
            int m = ranking.at(position);
            if (!contains(owners, base, chosen, m)) {
                boolean tight = isTight(m, slot, primariesAhead);
                if (tight || (ownedCounts[m] < ownedCaps[m] && positionsLeft > tightNeeded)) {
                    tightNeeded -= tight && tightNeeded > 0 ? 1 : 0;
                    return m;
                }
                fallback = fallback < 0 ? m : fallback;
            }
        }
        return fallback;
    }

    /**
     * How many tight members (see {@link #isTight}) other than its primary {@code slot} must take as backups for the
     * remaining caps to stay feasible: slack = sum over members of min(room, slots it can back up) - backups still
     * needed, and each tight member left out of this slot costs one unit of it.
     */
    private int tightNeeded(int slot, int primary, int[] primariesAhead) {
        long slotsLeft = SLOTS - slot;
        long slack = -(copies - 1) * slotsLeft;
        int tight = 0;
        for (int m = 0; m < ownedCaps.length; m++) {
            long room = Math.max(0, ownedCaps[m] - ownedCounts[m]);
            long backable = slotsLeft - primariesAhead[m];
            slack += Math.min(room, backable);
            tight += m != primary && room >= backable ? 1 : 0;
        }
        return (int) Math.max(0, Math.min(tight, tight - slack));
    }

    /** Whether member {@code m}, not primary of {@code slot}, has room to back up every remaining slot it can. */
    private boolean isTight(int m, int slot, int[] primariesAhead) {
        return ownedCaps[m] - ownedCounts[m] >= (SLOTS - slot) - primariesAhead[m];
    }

    private static boolean contains(int[] array, int from, int length, int value) {
        for (int i = from; i < from + length; i++) {
            if (array[i] == value) {
                return true;
            }
        }
        return false;
    }

    /**
     * Each member's fair number of the {@code SLOTS * copies} slot copies: proportional to weight, but at most
     * {@code SLOTS} (one copy per slot), the excess water-filled over the others by weight.
     */
    static double[] shares(List<Member> members, int copies) {
        double[] shares = new double[members.size()];
        List<Integer> byWeight = new ArrayList<>();
        double remainingWeight = 0;
        for (int i = 0; i < members.size(); i++) {
            byWeight.add(i);
            remainingWeight += members.get(i).weight();
        }
        byWeight.sort(Comparator.comparingLong((Integer i) -> members.get(i).weight()).reversed()
                .thenComparing(i -> i));
        double remainingCopies = (double) SLOTS * copies;
        for (int i : byWeight) {
            double weight = members.get(i).weight();
            shares[i] = Math.min(SLOTS, remainingCopies * weight / remainingWeight);
            remainingCopies -= shares[i];
            remainingWeight -= weight;
        }
        return shares;
    }

    private static int[] caps(double[] shares, double loadBound) {
        int[] caps = new int[shares.length];
        for (int i = 0; i < shares.length; i++) {
            caps[i] = (int) Math.ceil(loadBound * shares[i]); // saturates at Integer.MAX_VALUE when untuned
        }
        return caps;
    }

    private static List<Member> sortedById(List<Member> members) {
        List<Member> sorted = new ArrayList<>(members);
        sorted.forEach(m -> Objects.requireNonNull(m, "member"));
        sorted.sort(Comparator.comparing(Member::id));
        Set<String> ids = new HashSet<>();
        for (Member m : sorted) {
            if (!ids.add(m.id())) {
                throw new IllegalArgumentException("member id " + m.id() + " appears twice in the membership");
            }
        }
        return sorted;
    }
}
