package io.kvtier.cluster;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/*
 * Slot placement: from a membership, the owners of each of the 16384 slots.
 *
 * Design. Every node must derive the same table from the same view, and a view change must move as little data as
 * possible, in proportion to capacity. We use rendezvous (highest-random-weight, HRW) hashing [Thaler & Ravishankar,
 * "Using name-based mappings to increase hit rates", IEEE/ACM ToN 6(1), 1998]: each (member, slot) pair gets a
 * pseudo-random score and a slot's owners are its best-scoring members, primary first. A joining member takes only the
 * slots it now wins, a leaving member gives up only its own, and a slot's backups are simply the next members in its
 * ranking, so failover promotes the first backup and the rest of the list shifts up by one.
 *
 * Weights. Capacities differ (memory + disk), so scores use the logarithmic method of weighted rendezvous hashing
 * [Schindelhauer & Schomaker, "Weighted distributed hash tables", SPAA 2005; Resch, "New hashing algorithms for data
 * storage", 2015]: score = w / -ln(u) with u uniform in (0,1). Then -ln(u)/w is exponential with rate w, and the
 * smallest of independent exponentials belongs to member i with probability exactly w_i / W, so each member wins its
 * weighted share of slots and a join or leave still only moves slots to or from the member concerned.
 *
 * Bounded loads. Plain HRW shares are binomial: with 64 equal members a member expects 256 slots +- 16, and the most
 * loaded of 64 sits about 2.4 sigma up, ~1.15-1.2x its share (PlacementBalanceTest measures up to 1.19x, and 1.25x with
 * weights of 1..4x). A node's share of slots is its share of data and traffic, so the busiest node would fill first and
 * set the cluster's capacity. Following Mirrokni, Thorup & Zadimoghaddam ["Consistent Hashing with Bounded Loads", SODA
 * 2018] we cap every member at (1 + eps) times its weighted share, eps = 0.05: slots are assigned in order 0..16383,
 * and a member at its cap is passed over for the next one in the slot's ranking. The caps sum to more than 16384, so a
 * primary is always found. The price is some movement beyond HRW's minimum: a view change changes W and so every cap,
 * which shifts where members saturate and re-routes a few of the overflow slots. Their analysis bounds the extra
 * movement in terms of 1/eps; PlacementMovementTest measures it at about 1% of the slots.
 *
 * Backups. Once every slot has its primary, a second pass gives each slot the next distinct members of its ranking
 * whose total ownership (all their primaries plus the backups so far) is below (1 + eps) times their share of all
 * copies. Counting every primary up front, not just those of earlier slots, keeps a member that filled up on backups
 * from overshooting its cap with later primaries. Shares of copies are proportional to weight, except that no member
 * can hold two copies of a slot: a member whose proportional share exceeds 16384 copies is held at 16384 and the excess
 * is shared among the rest by weight (water-filling). Greedy in slot order can still corner itself when a slot needs
 * most of the members (replicas + 1 close to N, unequal weights): the top k of a weighted ranking are flatter than the
 * weights (light members make it in more often than their share), so light members reach their caps early and the last
 * slots find fewer members under cap than they need owners. So the pass keeps the caps feasible: with r slots left,
 * member i can still take min(room_i, r - its primaries ahead) backups, the slots need replicas * r, and the surplus
 * drops by one for every "tight" member (one that could back up every remaining slot it is not primary of) left out of
 * a slot, so when the surplus no longer covers the tight members, the slot takes tight members before others, still in
 * rank order. Only if the caps cannot be met at all does a slot fall back to plain rank order, so it always gets its
 * owners. Primaries never look at backups: changing the number of replicas moves no primary.
 *
 * Determinism. The table is a function of the member set: members are sorted by id before anything else, scores derive
 * only from (id, slot) through fixed integer hashes, ties rank by id, and the logarithm is StrictMath's, whose results
 * are bit-identical on every JVM and CPU (Math.log is allowed to differ by an ulp between platforms, which could make
 * two nodes disagree on a near-tie).
 *
 * Limits. An empty membership gives a table that owns nothing (the server answers -CLUSTERDOWN). With fewer members
 * than replicas + 1, every member owns every slot. Cost is O(16384 * N * k), k the ranks inspected per slot
 * (replicas + 1 plus the capped members passed over), twice (backups re-rank each slot rather than keep 16384
 * rankings): about 50 ms for 64 members and 2 replicas.
 */

/**
 * Computes slot tables by capacity-weighted rendezvous hashing with bounded loads. A pure function: the same member
 * set, in any order, always gives an equal table.
 */
public final class Placement {
    /** eps of the bounded loads: no member holds more than 1.05 times its weighted share (rounded up). */
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

    /** As {@link #compute(long, List, int)} with another load bound; {@code POSITIVE_INFINITY} gives plain HRW. */
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
            caps[i] = (int) Math.ceil(loadBound * shares[i]); // saturates at Integer.MAX_VALUE for plain HRW
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
