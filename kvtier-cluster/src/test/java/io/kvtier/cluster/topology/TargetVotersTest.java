package io.kvtier.cluster.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.Member;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The voters the leader works towards ({@link ConfigService#targetVoters}), from configurations built through the
 * state machine's own commands: members up and members down after a failure vote, members stopped or gone do not; an
 * odd number where there are more than two, at most seven, never fewer than two.
 */
class TargetVotersTest {
    private final ConfigStateMachine machine = new ConfigStateMachine(c -> { });

    private static Member member(String id) {
        return new Member(id, 1, "127.0.0.1:" + (7000 + Integer.parseInt(id.substring(1))));
    }

    private static long incarnation(String id) {
        return 100 + Integer.parseInt(id.substring(1));
    }

    private void apply(byte[] command) {
        try {
            machine.apply(command, 0, command.length, true);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A cluster of members n1..n{@code count}, all up. */
    private void start(int count) {
        apply(ConfigStateMachine.setup(1));
        for (int i = 1; i <= count; i++) {
            apply(ConfigStateMachine.renew(member("n" + i), incarnation("n" + i), 0, new BitSet()));
        }
        apply(ConfigStateMachine.include(new ArrayList<>(machine.current().candidates().values())));
        assertThat(machine.current().members()).hasSize(count);
    }

    private void fail(String id) {
        apply(ConfigStateMachine.exclude(id, incarnation(id), machine.current().members().get(id).renewals()));
        assertThat(machine.current().down().get(id).stopped()).isFalse();
    }

    private void stop(String id) {
        apply(ConfigStateMachine.stop(id, incarnation(id)));
        assertThat(machine.current().down().get(id).stopped()).isTrue();
    }

    private List<String> target(String... current) {
        return ConfigService.targetVoters(machine.current(), List.of(current));
    }

    @Test
    void threeMembersUpAreThreeVoters() {
        start(3);
        assertThat(target("n1", "n2", "n3")).containsExactly("n1", "n2", "n3");
    }

    @Test
    void fourMembersUpAreThreeVotersOneFewerToleratesAsManyFailures() {
        start(4);
        assertThat(target("n1", "n2", "n3")).containsExactly("n1", "n2", "n3");
    }

    @Test
    void nineMembersUpAreSevenVoters() {
        start(9);
        assertThat(target("n1", "n2", "n3")).containsExactly("n1", "n2", "n3", "n4", "n5", "n6", "n7");
    }

    @Test
    void aFailedMemberKeepsItsVoteItMayComeBackAndAMajorityMustTakeItBack() {
        start(5);
        fail("n5");
        assertThat(target("n1", "n2", "n3", "n4", "n5")).containsExactly("n1", "n2", "n3", "n4", "n5");
    }

    @Test
    void stoppedMembersGiveUpTheirVoteTheNextFailureMustNotTakeTheQuorum() {
        start(5);
        stop("n5");
        stop("n4");
        assertThat(target("n1", "n2", "n3", "n4", "n5")).containsExactly("n1", "n2", "n3");
    }

    @Test
    void anEvenCountDropsAFailedMemberFirst() {
        start(4);
        fail("n2");
        // Up: n1, n3, n4, then the failed n2: four, so the failed one goes.
        assertThat(target("n1", "n2", "n3")).containsExactly("n1", "n3", "n4");
    }

    @Test
    void departedMembersLoseTheirVote() {
        start(5);
        apply(ConfigStateMachine.leave("n5", incarnation("n5")));
        fail("n4");
        apply(ConfigStateMachine.forget("n4"));
        assertThat(machine.current().members()).containsOnlyKeys("n1", "n2", "n3");
        assertThat(target("n1", "n2", "n3", "n4", "n5")).containsExactly("n1", "n2", "n3");
    }

    @Test
    void neverFewerThanTwo() {
        start(2);
        assertThat(target("n1", "n2")).containsExactly("n1", "n2");
        stop("n2");
        assertThat(target("n1", "n2")).as("one voter would take itself for a single-node cluster: unchanged")
                .containsExactly("n1", "n2");
    }
}
