package io.kvtier.cluster.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The configuration's commands, applied as Raft applies them: deterministic, conditional where time decided. */
class ConfigStateMachineTest {
    private final List<ClusterConfig> seen = new ArrayList<>();
    private final ConfigStateMachine machine = new ConfigStateMachine(seen::add);

    private static final java.util.BitSet NONE = new java.util.BitSet();

    /** The first slot {@code id} owns in {@code c}'s table, as an importing set. */
    private static java.util.BitSet firstOf(ClusterConfig c, String id) {
        java.util.BitSet one = new java.util.BitSet();
        one.set(c.table().slotsOf(c.members().get(id).member()).nextSetBit(0));
        return one;
    }

    private static Member member(String id) {
        return new Member(id, 1, "127.0.0.1:" + (7000 + id.charAt(1)));
    }

    private boolean apply(byte[] command) throws Exception {
        byte[] r = machine.apply(command, 0, command.length, true);
        return r.length == 1 && r[0] == 1;
    }

    private void renewAll(long... incarnations) throws Exception {
        for (int i = 0; i < incarnations.length; i++) {
            apply(ConfigStateMachine.renew(member("n" + (i + 1)), incarnations[i], machine.current().epoch(), NONE));
        }
    }

    private void startThree() throws Exception {
        assertThat(apply(ConfigStateMachine.setup(1))).isTrue();
        renewAll(11, 12, 13); // candidates
        assertThat(apply(ConfigStateMachine.include(new ArrayList<>(machine.current().candidates().values()))))
                .isTrue();
    }

    @Test
    void candidatesBecomeMembersOfOneTableAndRenewalsGrantLeasesOnlyToTheActiveIncarnation() throws Exception {
        startThree();
        ClusterConfig c = machine.current();
        assertThat(c.epoch()).isEqualTo(1);
        assertThat(c.members()).containsOnlyKeys("n1", "n2", "n3");
        assertThat(c.candidates()).isEmpty();
        assertThat(c.table().members()).hasSize(3);
        assertThat(apply(ConfigStateMachine.renew(member("n1"), 11, 1, NONE))).as("active incarnation").isTrue();
        assertThat(apply(ConfigStateMachine.renew(member("n1"), 99, 1, NONE))).as("a restarted process").isFalse();
        assertThat(machine.current().candidates()).containsOnlyKeys("n1");
        assertThat(machine.current().epoch()).as("renewals change no table").isEqualTo(1);
    }

    @Test
    void anExclusionAppliesOnlyIfNoRenewalCommittedSinceTheLeaderSawTheLeaseRunOut() throws Exception {
        startThree();
        long renewals = machine.current().members().get("n2").renewals();
        apply(ConfigStateMachine.renew(member("n2"), 12, 1, NONE)); // committed between the leader's look and its command
        assertThat(apply(ConfigStateMachine.exclude("n2", 12, renewals))).isFalse();
        assertThat(machine.current().members()).containsKey("n2");
        long now = machine.current().members().get("n2").renewals();
        assertThat(apply(ConfigStateMachine.exclude("n2", 12, now))).isTrue();
        assertThat(machine.current().members()).containsOnlyKeys("n1", "n3");
        assertThat(machine.current().down()).as("down, still placed").containsOnlyKeys("n2");
        assertThat(machine.current().epoch()).isEqualTo(2);
        assertThat(apply(ConfigStateMachine.exclude("n2", 12, now))).as("twice").isFalse();
    }

    @Test
    void aNewPrimaryIsFencedUntilEveryOtherMemberConfirmedTheTableThatMadeItPrimary() throws Exception {
        startThree();
        renewAll(11, 12, 13); // everyone confirms epoch 1
        ClusterConfig one = machine.current();
        assertThat(one.fence("n1")).isEqualTo(1);
        // n3 leaves: its slots get new primaries at epoch 2, which n2 has not confirmed yet.
        assertThat(apply(ConfigStateMachine.leave("n3", 13))).isTrue();
        ClusterConfig two = machine.current();
        int moved = -1;
        int kept = -1;
        for (int s = 0; s < SlotHash.SLOTS && (moved < 0 || kept < 0); s++) {
            if (two.table().primary(s).id().equals("n1")) {
                if (one.table().primary(s).id().equals("n3")) {
                    moved = s;
                } else if (one.table().primary(s).id().equals("n1")) {
                    kept = s;
                }
            }
        }
        assertThat(two.primarySince()[moved]).isEqualTo(2);
        assertThat(two.primarySince()[kept]).isEqualTo(one.primarySince()[kept]);
        assertThat(two.primarySince()[moved]).as("n1 may not serve the moved slot yet")
                .isGreaterThan(two.fence("n1"));
        assertThat(two.primarySince()[kept]).as("n1 keeps serving its own").isLessThanOrEqualTo(two.fence("n1"));
        apply(ConfigStateMachine.renew(member("n2"), 12, 2, NONE));
        assertThat(machine.current().primarySince()[moved]).isLessThanOrEqualTo(machine.current().fence("n1"));
    }

    @Test
    void aMemberIncludedAgainWhileAwayGetsNoLeaseUntilItHasAppliedTheTableThatIncludedIt() throws Exception {
        startThree();
        long renewals = machine.current().members().get("n2").renewals();
        assertThat(apply(ConfigStateMachine.exclude("n2", 12, renewals))).isTrue(); // paused: its lease ran out
        // Back from the pause, still at epoch 1: a candidate, behind the configuration, so not included yet.
        assertThat(apply(ConfigStateMachine.renew(member("n2"), 12, 1, NONE))).isFalse();
        assertThat(machine.current().candidates().get("n2").appliedEpoch()).isEqualTo(1);
        // Caught up with epoch 2 (it has applied its own exclusion and dropped its data), it is included at 3.
        apply(ConfigStateMachine.renew(member("n2"), 12, 2, NONE));
        assertThat(apply(ConfigStateMachine.include(List.of(machine.current().candidates().get("n2"))))).isTrue();
        assertThat(machine.current().epoch()).isEqualTo(3);
        assertThat(apply(ConfigStateMachine.renew(member("n2"), 12, 2, NONE))).as("still serving epoch 2 here").isFalse();
        assertThat(apply(ConfigStateMachine.renew(member("n2"), 12, 3, NONE))).isTrue();
    }

    @Test
    void aSnapshotRestoresTheSameConfiguration() throws Exception {
        startThree();
        renewAll(11, 12, 13);
        apply(ConfigStateMachine.renew(member("n4"), 14, 0, NONE));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        machine.writeContentTo(new DataOutputStream(bytes));
        ConfigStateMachine copy = new ConfigStateMachine(c -> { });
        copy.readContentFrom(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        assertThat(copy.current()).isEqualTo(machine.current());
        assertThat(copy.current().table()).isEqualTo(machine.current().table());
        assertThat(copy.renewedAtNanos("n2")).isNotNull();
    }

    /** Whether some owner of {@code slot} in {@code after} owned it in {@code before} too. */
    private static boolean keptOwner(ClusterConfig before, ClusterConfig after, int slot) {
        return after.table().owners(slot).stream().anyMatch(m -> before.table().owners(slot).stream()
                .anyMatch(o -> o.id().equals(m.id())));
    }

    @Test
    void aSlotIsCompleteAtAnEpochOnlyOnceAnOwnerReportsItHasAllOfItUnderThatEpoch() throws Exception {
        startThree();
        ClusterConfig one = machine.current();
        assertThat(one.completeEpoch()).as("the first table: nobody held anything").containsOnly(1L);
        assertThat(one.members().values()).allMatch(a -> a.complete().equals(one.table().slotsOf(a.member())));
        // n4 joins: nobody has said anything of epoch 2 yet, so every slot is complete at 1 only.
        apply(ConfigStateMachine.renew(member("n4"), 14, 1, NONE));
        assertThat(apply(ConfigStateMachine.include(List.of(machine.current().candidates().get("n4"))))).isTrue();
        ClusterConfig two = machine.current();
        assertThat(two.completeEpoch()).containsOnly(1L);
        assertThat(two.members().values()).allMatch(a -> a.complete().isEmpty());
        // A report under the previous table says nothing of this one; under this one, it marks the reporter's slots.
        apply(ConfigStateMachine.renew(member("n1"), 11, 1, NONE));
        assertThat(machine.current().completeEpoch()).containsOnly(1L);
        apply(ConfigStateMachine.renew(member("n1"), 11, 2, NONE));
        java.util.BitSet n1 = two.table().slotsOf(two.members().get("n1").member());
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            assertThat(machine.current().completeEpoch()[s]).as("slot %d", s).isEqualTo(n1.get(s) ? 2L : 1L);
        }
        // n4 reports all but one of its slots.
        apply(ConfigStateMachine.renew(member("n4"), 14, 2, firstOf(machine.current(), "n4")));
        ClusterConfig partly = machine.current();
        java.util.BitSet owned = partly.table().slotsOf(partly.members().get("n4").member());
        java.util.BitSet expected = (java.util.BitSet) owned.clone();
        expected.andNot(firstOf(partly, "n4"));
        assertThat(partly.members().get("n4").complete()).as("all but the slot it still imports").isEqualTo(expected);
        apply(ConfigStateMachine.renew(member("n4"), 14, 2, NONE));
        assertThat(machine.current().members().get("n4").complete()).isEqualTo(owned);
        // A snapshot keeps completeness.
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        machine.writeContentTo(new DataOutputStream(bytes));
        ConfigStateMachine copy = new ConfigStateMachine(c -> { });
        copy.readContentFrom(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        assertThat(copy.current()).isEqualTo(machine.current());
        assertThat(copy.current().members().get("n4").complete()).isEqualTo(owned);
    }

    @Test
    void aMemberDownKeepsItsPlaceAndGetsTheLeadOfItsSlotsBackOnceCompleteAgain() throws Exception {
        startThree();
        renewAll(11, 12, 13);
        ClusterConfig one = machine.current();
        assertThat(apply(ConfigStateMachine.stop("n2", 12))).isTrue();
        ClusterConfig two = machine.current();
        assertThat(two.down()).containsOnlyKeys("n2");
        assertThat(two.down().get("n2").stopped()).isTrue();
        int n2Led = 0;
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            List<String> before = one.table().owners(s).stream().map(Member::id).filter(id -> !id.equals("n2"))
                    .toList();
            assertThat(two.table().owners(s).stream().map(Member::id).toList()).as("slot %d: owners that are up, "
                    + "none moved", s).containsExactlyInAnyOrderElementsOf(before);
            n2Led += one.table().primary(s).id().equals("n2") ? 1 : 0;
        }
        assertThat(n2Led).isGreaterThan(0);
        // Back (a new incarnation): in its place again, leading nothing until it is complete.
        apply(ConfigStateMachine.renew(member("n2"), 22, 2, NONE));
        assertThat(apply(ConfigStateMachine.include(List.of(machine.current().candidates().get("n2"))))).isTrue();
        ClusterConfig three = machine.current();
        assertThat(three.down()).isEmpty();
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            assertThat(three.table().owners(s).stream().map(Member::id).toList()).as("slot %d", s)
                    .containsExactlyInAnyOrderElementsOf(one.table().owners(s).stream().map(Member::id).toList());
        }
        assertThat(three.table().primaryCount(three.members().get("n2").member())).isZero();
        assertThat(apply(ConfigStateMachine.rebalance())).as("not complete yet: nothing to give back").isFalse();
        renewAll(11, 22, 13); // all three report every slot they own complete under epoch 3
        assertThat(apply(ConfigStateMachine.rebalance())).isTrue();
        ClusterConfig four = machine.current();
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            assertThat(four.table().primary(s).id()).as("slot %d", s).isEqualTo(one.table().primary(s).id());
        }
        assertThat(apply(ConfigStateMachine.rebalance())).as("nothing more to move").isFalse();
    }

    @Test
    void forgetTakesOnlyADownMemberOutOfThePlacement() throws Exception {
        startThree();
        assertThat(apply(ConfigStateMachine.forget("n2"))).as("n2 is up").isFalse();
        long renewals = machine.current().members().get("n2").renewals();
        assertThat(apply(ConfigStateMachine.exclude("n2", 12, renewals))).isTrue();
        assertThat(apply(ConfigStateMachine.forget("n2"))).isTrue();
        ClusterConfig c = machine.current();
        assertThat(c.down()).isEmpty();
        assertThat(c.members()).containsOnlyKeys("n1", "n3");
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            assertThat(c.table().owners(s)).as("slot %d: placed on the two left", s).hasSize(2);
        }
    }

    @Test
    void lossIsAcceptedOnlyForSlotsThatNoMemberIsCompleteForAtThisEpoch() throws Exception {
        startThree();
        long renewals = machine.current().members().get("n2").renewals();
        assertThat(apply(ConfigStateMachine.exclude("n2", 12, renewals))).isTrue();
        apply(ConfigStateMachine.renew(member("n1"), 11, 2, NONE)); // n1 reports its slots complete at 2
        ClusterConfig c = machine.current();
        java.util.BitSet all = new java.util.BitSet();
        all.set(0, SlotHash.SLOTS);
        assertThat(apply(ConfigStateMachine.acceptLoss(c.epoch(), all))).isTrue();
        ClusterConfig after = machine.current();
        assertThat(after.epoch()).as("no new table").isEqualTo(c.epoch());
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            assertThat(after.completeEpoch()[s]).as("slot %d", s).isEqualTo(c.completeEpoch()[s] == 2 ? 2
                    : ClusterConfig.LOSS_ACCEPTED);
        }
        assertThat(apply(ConfigStateMachine.acceptLoss(c.epoch(), all))).as("twice").isFalse();
        apply(ConfigStateMachine.renew(member("n3"), 13, 2, NONE));
        assertThat(machine.current().completeEpoch()).as("the owners' reports complete them again")
                .containsOnly(2L);
    }

    @Test
    void withoutBackupsASlotMovedToANewMemberStaysAtItsOldEpochUntilTheNewOwnerReports() throws Exception {
        assertThat(apply(ConfigStateMachine.setup(0))).isTrue();
        renewAll(11, 12);
        apply(ConfigStateMachine.include(new ArrayList<>(machine.current().candidates().values())));
        apply(ConfigStateMachine.renew(member("n3"), 13, 1, NONE));
        apply(ConfigStateMachine.include(List.of(machine.current().candidates().get("n3"))));
        ClusterConfig two = machine.current();
        java.util.BitSet moved = two.table().slotsOf(two.members().get("n3").member());
        assertThat(moved.cardinality()).isGreaterThan(0);
        assertThat(two.completeEpoch()).containsOnly(1L);
        apply(ConfigStateMachine.renew(member("n3"), 13, 2, NONE));
        for (int s = moved.nextSetBit(0); s >= 0; s = moved.nextSetBit(s + 1)) {
            assertThat(machine.current().completeEpoch()[s]).isEqualTo(2);
        }
        renewAll(11, 12, 13); // everyone reports nothing importing under epoch 2
        assertThat(machine.current().completeEpoch()).containsOnly(2L);
    }
}
