package io.kvtier.cluster.membership;

import java.util.List;
import org.jgroups.Address;
import org.jgroups.View;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.raft.ELECTION2;
import org.jgroups.protocols.raft.election.BaseElection;
import org.jgroups.raft.util.Utils;

/**
 * jgroups-raft's ELECTION2 (pre-vote, then vote, run by the view's coordinator), except that no voting round runs
 * while fewer of the configured voters than a majority are in the view.
 *
 * <p>ELECTION2 starts a round when the view has as many members as a majority, counting learners, and a round that
 * gets too few votes starts the next one at once with a higher term. A learner that knows no voters yet (a joiner
 * whose seeds did not answer: its view is itself, its voters an empty list, so its majority is one) thus ran rounds
 * without pause, raising its term by thousands a second; once merged with the cluster, its term made it refuse the
 * leader's appends, and it never caught up (ClusterMergeIT). Here a round starts only, and goes on only, while a
 * majority of the voters is in the view; a later view that has one starts it as ELECTION2 does.
 *
 * <p>Wire-compatible with ELECTION2: it uses ELECTION2's protocol id, so its headers are ELECTION2's.
 */
final class ControlPlaneElection extends ELECTION2 {
    ControlPlaneElection() {
        setId(ClassConfigurator.getProtocolId(ELECTION2.class));
    }

    /** Starts a voting round only with a majority of the voters in view. */
    @Override
    public synchronized BaseElection startVotingThread() {
        return votersInView() < raft().majority() ? this : super.startVotingThread();
    }

    @Override
    protected void runVotingProcess() {
        if (votersInView() < raft().majority()) {
            // Voters left the view during the election: ELECTION2 stops its thread, without a new term, when
            // interrupted.
            Thread.currentThread().interrupt();
        }
        super.runVotingProcess();
    }

    /**
     * Starts a voting round now if this node coordinates the view and none runs: for a leader that every member still
     * names but that no longer leads (it stepped down in a minority view, and the merged view kept the coordinator, so
     * ELECTION2 saw no reason to vote; nothing committed for good). As ELECTION2's pre-vote does when a majority names
     * an outdated leader, the leader is forgotten first. Returns whether a round started.
     */
    boolean electIfCoordinator() {
        if (!isViewCoordinator() || isVotingThreadRunning() || votersInView() < raft().majority()) {
            return false;
        }
        raft().setLeaderAndTerm(null);
        startVotingThread();
        return true;
    }

    private int votersInView() {
        View v = view;
        List<String> voters = raft().members();
        if (v == null || voters.isEmpty()) {
            return 0;
        }
        int n = 0;
        for (Address a : v.getMembersRaw()) {
            if (voters.contains(Utils.extractRaftId(a))) {
                n++;
            }
        }
        return n;
    }
}
