package io.kvtier.cluster;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/** Random memberships for the placement property tests; every call draws from the caller's seeded random. */
final class Memberships {
    static final long MIN_WEIGHT = 1_000;
    static final long MAX_WEIGHT = 4_000;

    private Memberships() {
    }

    /** {@code n} members of weight 1 with random, distinct ids. */
    static List<Member> equalWeights(Random random, int n) {
        return members(random, n, false);
    }

    /** {@code n} members with random, distinct ids and weights spread over {@code MIN_WEIGHT..MAX_WEIGHT} (1..4x). */
    static List<Member> randomWeights(Random random, int n) {
        return members(random, n, true);
    }

    static List<Member> members(Random random, int n, boolean weighted) {
        List<Member> members = new ArrayList<>(n);
        Set<String> ids = new HashSet<>();
        while (members.size() < n) {
            Member m = member(random, weighted);
            if (ids.add(m.id())) {
                members.add(m);
            }
        }
        return members;
    }

    /** A member whose id is not among {@code existing}'s. */
    static Member newMember(Random random, List<Member> existing, boolean weighted) {
        Set<String> ids = new HashSet<>();
        existing.forEach(m -> ids.add(m.id()));
        Member m;
        do {
            m = member(random, weighted);
        } while (ids.contains(m.id()));
        return m;
    }

    private static Member member(Random random, boolean weighted) {
        long weight = weighted ? MIN_WEIGHT + random.nextLong(MAX_WEIGHT - MIN_WEIGHT + 1) : 1;
        return new Member("node-" + Long.toHexString(random.nextLong()), weight);
    }

    static long totalWeight(List<Member> members) {
        return members.stream().mapToLong(Member::weight).sum();
    }
}
