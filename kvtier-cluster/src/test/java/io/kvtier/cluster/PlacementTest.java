package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.client.cluster.SlotHash;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Placement gives every slot its owners, deterministically, and rejects memberships it cannot place. */
class PlacementTest {
    private static final int SLOTS = SlotHash.SLOTS;

    @Test
    void givesEverySlotAsManyDistinctOwnersAsTheMembersAllow() {
        for (long seed = 0; seed < 40; seed++) {
            Random random = new Random(seed);
            int n = 1 + random.nextInt(12);
            int replicas = random.nextInt(5);
            SlotTable table = Placement.compute(1, Memberships.randomWeights(random, n), replicas);

            assertThat(table.copies()).as("seed %d", seed).isEqualTo(Math.min(replicas + 1, n));
            for (int slot = 0; slot < SLOTS; slot++) {
                List<Member> owners = table.owners(slot);
                assertThat(owners).as("seed %d slot %d", seed, slot).hasSize(table.copies()).doesNotHaveDuplicates();
                assertThat(table.primary(slot)).as("seed %d slot %d", seed, slot).isEqualTo(owners.getFirst());
            }
        }
    }

    @Test
    void computesAnEqualTableWhateverTheOrderOfTheMembers() {
        for (long seed = 0; seed < 20; seed++) {
            Random random = new Random(seed);
            List<Member> members = Memberships.randomWeights(random, 2 + random.nextInt(30));
            List<Member> shuffled = new ArrayList<>(members);
            Collections.shuffle(shuffled, random);

            assertThat(Placement.compute(7, shuffled, 2)).as("seed %d", seed)
                    .isEqualTo(Placement.compute(7, members, 2));
        }
    }

    @Test
    void aRememberedPlacementIsTheComputedOneAndServesTheSameTables() {
        for (long seed = 0; seed < 12; seed++) {
            Random random = new Random(seed);
            List<Member> members = Memberships.randomWeights(random, 2 + random.nextInt(10));
            List<Member> shuffled = new ArrayList<>(members);
            Collections.shuffle(shuffled, random);
            SlotTable computed = Placement.compute(0, members, 1);
            SlotTable remembered = Placement.placement(shuffled, 1);
            assertThat(Placement.placement(members, 1)).as("asked again").isSameAs(remembered);
            for (int slot = 0; slot < SLOTS; slot++) {
                assertThat(remembered.owners(slot)).as("seed %d slot %d", seed, slot).isEqualTo(computed.owners(slot));
            }
            // One member down, every other slot led by its last up owner: the same table from either.
            java.util.Set<String> up = new HashSet<>();
            members.stream().skip(1).forEach(m -> up.add(m.id()));
            Placement.Leader last = (slot, upOwners) -> slot % 2 == 0 ? upOwners.getLast().id() : null;
            SlotTable a = Placement.serve(9, computed, up, last);
            SlotTable b = Placement.serve(9, remembered, up, last);
            assertThat(b).as("seed %d", seed).isEqualTo(a);
            for (int slot = 0; slot < SLOTS; slot++) {
                List<Member> owners = computed.owners(slot).stream().filter(m -> up.contains(m.id())).toList();
                if (owners.isEmpty()) {
                    assertThat(a.served(slot)).isFalse();
                    continue;
                }
                Member lead = slot % 2 == 0 ? owners.getLast() : owners.getFirst();
                assertThat(a.primary(slot)).as("seed %d slot %d", seed, slot).isEqualTo(lead);
                assertThat(a.owners(slot)).containsExactlyInAnyOrderElementsOf(owners);
            }
        }
    }

    @Test
    void givesAnEmptyMembershipATableThatOwnsNothing() {
        SlotTable table = Placement.compute(3, List.of(), 2);

        assertThat(table.isOwned()).isFalse();
        assertThat(table.copies()).isZero();
        assertThat(table.members()).isEmpty();
        for (int slot = 0; slot < SLOTS; slot++) {
            assertThat(table.owners(slot)).isEmpty();
        }
        assertThatThrownBy(() -> table.primary(5)).isInstanceOf(IllegalStateException.class)
                .hasMessage("slot 5 has no owner: the slot table of epoch 3 has no members");
    }

    @Test
    void givesEveryMemberEverySlotWhenThereAreNoMoreMembersThanCopies() {
        List<Member> members = List.of(new Member("a", 1), new Member("b", 10));
        SlotTable table = Placement.compute(1, members, 2);

        assertThat(table.copies()).isEqualTo(2);
        for (Member m : members) {
            assertThat(table.ownedCount(m)).isEqualTo(SLOTS);
        }
        assertThat(new HashSet<>(table.owners(0))).containsExactlyInAnyOrderElementsOf(members);
    }

    @Test
    void movesNoPrimaryWhenOnlyTheNumberOfReplicasChanges() {
        List<Member> members = Memberships.randomWeights(new Random(5), 20);

        assertThat(Placement.compute(1, members, 0).movedPrimaries(Placement.compute(1, members, 3))).isZero();
    }

    @Test
    void rejectsABlankMemberId() {
        assertThatThrownBy(() -> new Member(" ", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("member id \" \" is blank");
    }

    @Test
    void rejectsAWeightThatIsNotPositive() {
        assertThatThrownBy(() -> new Member("a", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("member a weight 0 must be positive");
        assertThatThrownBy(() -> new Member("b", -5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("member b weight -5 must be positive");
    }

    @Test
    void rejectsTwoMembersWithTheSameId() {
        List<Member> members = List.of(new Member("a", 1), new Member("b", 1), new Member("a", 2));

        assertThatThrownBy(() -> Placement.compute(1, members, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("member id a appears twice in the membership");
    }

    @Test
    void rejectsANegativeNumberOfReplicas() {
        assertThatThrownBy(() -> Placement.compute(1, List.of(new Member("a", 1)), -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("--replicas -1 must be at least 0");
    }

    @Test
    void computesATableOf64MembersWithTwoReplicasWellUnderASecond() {
        List<Member> members = Memberships.randomWeights(new Random(64), 64);
        for (int warmup = 0; warmup < 5; warmup++) {
            Placement.compute(warmup, members, 2);
        }
        long best = Long.MAX_VALUE;
        for (int run = 0; run < 5; run++) {
            long start = System.nanoTime();
            Placement.compute(run, members, 2);
            best = Math.min(best, System.nanoTime() - start);
        }
        System.out.printf("placement of 64 members, 2 replicas: %.1f ms (best of 5 after warm-up)%n", best / 1e6);
        assertThat(best).isLessThan(1_000_000_000L);
    }
}
