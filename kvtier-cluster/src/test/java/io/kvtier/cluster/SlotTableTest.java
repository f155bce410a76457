package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.client.cluster.SlotHash;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A slot table's queries agree with each other and with its owner lists. */
class SlotTableTest {
    private static final int SLOTS = SlotHash.SLOTS;
    private final List<Member> members = Memberships.randomWeights(new Random(11), 9);
    private final SlotTable table = Placement.compute(4, members, 2);

    @Test
    void reportsEachMembersSlotsAndCountsConsistentlyWithTheOwnerLists() {
        int primaries = 0;
        int owned = 0;
        for (Member m : members) {
            BitSet primarySlots = table.primarySlotsOf(m);
            BitSet slots = table.slotsOf(m);
            assertThat(primarySlots.cardinality()).isEqualTo(table.primaryCount(m));
            assertThat(slots.cardinality()).isEqualTo(table.ownedCount(m));
            primarySlots.stream().forEach(slot -> assertThat(table.primary(slot)).isEqualTo(m));
            slots.stream().forEach(slot -> assertThat(table.owners(slot)).contains(m));
            primaries += table.primaryCount(m);
            owned += table.ownedCount(m);
        }
        assertThat(primaries).isEqualTo(SLOTS);
        assertThat(owned).isEqualTo(SLOTS * 3);
    }

    @Test
    void listsTheSlotsAsMaximalRangesOfEqualOwners() {
        checkRanges(table.ranges(), table.copies());
        checkRanges(table.primaryRanges(), 1);
        assertThat(table.primaryRanges().size()).isLessThan(table.ranges().size());
        assertThat(table.ranges()).isSameAs(table.ranges());
    }

    @Test
    void listsOneRangeForASingleMemberAndNoneForAnEmptyMembership() {
        Member only = new Member("only", 3);

        assertThat(Placement.compute(1, List.of(only), 2).ranges()).containsExactly(new SlotRange(0, SLOTS - 1,
                List.of(only)));
        assertThat(Placement.compute(1, List.of(only), 2).primaryRanges().getFirst().primary()).isEqualTo(only);
        assertThat(Placement.compute(1, List.of(), 2).ranges()).isEmpty();
        assertThat(Placement.compute(1, List.of(), 2).primaryRanges()).isEmpty();
    }

    /** The ranges cover slot 0 to 16383 in order, agree with the owner lists and differ from their neighbours. */
    private void checkRanges(List<SlotRange> ranges, int roles) {
        int next = 0;
        SlotRange previous = null;
        for (SlotRange range : ranges) {
            assertThat(range.start()).isEqualTo(next);
            assertThat(range.end()).isGreaterThanOrEqualTo(range.start());
            for (int slot = range.start(); slot <= range.end(); slot++) {
                assertThat(table.owners(slot).subList(0, roles)).isEqualTo(range.owners());
            }
            if (previous != null) {
                assertThat(range.owners()).isNotEqualTo(previous.owners());
            }
            previous = range;
            next = range.end() + 1;
        }
        assertThat(next).isEqualTo(SLOTS);
        assertThat(ranges.stream().mapToInt(SlotRange::size).sum()).isEqualTo(SLOTS);
    }

    @Test
    void fingerprintTellsTablesOfOneEpochOverDifferentMembersApart() {
        SlotTable same = Placement.compute(4, List.copyOf(members), 2);
        SlotTable otherSide = Placement.compute(4, members.subList(0, 8), 2);
        SlotTable thisSide = Placement.compute(4, members.subList(1, 9), 2);

        assertThat(same.fingerprint()).isEqualTo(table.fingerprint());
        assertThat(otherSide.fingerprint()).isNotEqualTo(thisSide.fingerprint()).isNotEqualTo(table.fingerprint());
        assertThat(Placement.compute(4, members, 1).fingerprint()).isNotEqualTo(table.fingerprint());
    }

    @Test
    void givesAStrangerNoSlots() {
        Member stranger = new Member("stranger", 1);

        assertThat(table.slotsOf(stranger).isEmpty()).isTrue();
        assertThat(table.primaryCount(stranger)).isZero();
        assertThat(table.ownedCount(stranger)).isZero();
    }

    @Test
    void keepsTheMembersSortedById() {
        assertThat(table.members()).extracting(Member::id).isSorted().hasSize(9);
    }

    @Test
    void countsMovedPrimariesByMemberId() {
        List<Member> reweighted = members.stream().map(m -> new Member(m.id(), m.weight() + 1)).toList();

        assertThat(table.movedPrimaries(table)).isZero();
        assertThat(table.movedPrimaries(Placement.compute(5, members, 0))).isZero();
        assertThat(table.movedPrimaries(Placement.compute(4, List.of(), 2))).isEqualTo(SLOTS);
        assertThat(Placement.compute(4, List.of(), 2).movedPrimaries(Placement.compute(5, List.of(), 0))).isZero();
        assertThat(table.movedPrimaries(Placement.compute(4, reweighted, 2))).isLessThan(SLOTS / 10);
    }

    @Test
    void comparesTablesByContent() {
        assertThat(Placement.compute(4, members, 2)).isEqualTo(table).hasSameHashCodeAs(table);
        assertThat(Placement.compute(5, members, 2)).isNotEqualTo(table);
        assertThat(Placement.compute(4, members, 1)).isNotEqualTo(table);
        assertThat(Placement.compute(4, members.subList(1, 9), 2)).isNotEqualTo(table);
        assertThat(table).hasToString("SlotTable[epoch=4, members=9, replicas=2, copies=3]");
    }

    @Test
    void rejectsSlotsOutsideTheKeySpace() {
        assertThatThrownBy(() -> table.owners(SLOTS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("slot 16384 is outside 0..16383");
        assertThatThrownBy(() -> table.primary(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("slot -1 is outside 0..16383");
    }
}
