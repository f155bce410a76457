package io.kvtier.cluster.node;

import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.error.UnreplicatedException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A sync-replicated write that ran on this node, as primary, and keeps its keys' locks until every backup of their
 * slots, in the topology current at each attempt, has confirmed the keys' resulting state. Readers on the primary
 * wait for those locks too, so a value is never seen before its backups have it: either they confirm it (then it is
 * visible and kept) or this node fails first (then it is lost, never having been seen).
 *
 * <p>The client's answer comes at the latest at its deadline: OK once confirmed, {@code -UNREPLICATED} if not confirmed
 * by then. Attempts go on after that, in the background, one at a time, each bounded by the peer timeout (that of the
 * peer connection's commands) and spaced by a growing pause, cut short when a new table is installed (the failed
 * backup's replacement is tried at once, not up to a peer timeout later), until one succeeds, this node no longer
 * serves as the keys' primary (their new owners fetch the keys from the freshest holder, which waits for the lock),
 * this node dropped its copies of their slots (an exclusion and inclusion, or the slots moved away and back, between
 * two attempts: the store no longer holds the write's state), or the node closes. Each attempt reads the keys' state
 * from the store again: a held write keeps its keys, no copy of values.
 */
public final class HeldWrite {
    /** Pause before the second attempt; it doubles up to the peer timeout. */
    private static final long FIRST_PAUSE_MILLIS = 20;

    private final ClusterNode node;
    private final Replicator replicator;
    private final byte[][] keys;
    /** {@link ClusterNode#drops} of the keys when the write ran. */
    private final long[] dropsAtWrite;
    private final Runnable unlock;
    private final CompletableFuture<Void> answer = new CompletableFuture<>();
    private volatile String lastFailure = "no answer from its backups yet";
    private long pauseMillis = FIRST_PAUSE_MILLIS;
    /** The topology of the previous attempt: a new one starts the backoff over. */
    private ClusterNode.Topology lastTopology;

    private HeldWrite(ClusterNode node, Replicator replicator, byte[][] keys, long[] dropsAtWrite, Runnable unlock) {
        this.node = node;
        this.replicator = replicator;
        this.keys = keys;
        this.dropsAtWrite = dropsAtWrite;
        this.unlock = unlock;
    }

    /**
     * Confirms the write of {@code keys} (their locks held; {@code unlock} releases them, run exactly once, when the
     * write is resolved) with their backups. The returned future completes when confirmed, or fails with
     * {@link UnreplicatedException} at {@code deadlineNanos} (System.nanoTime()) if not confirmed by then.
     * {@code dropsAtWrite}: {@link ClusterNode#drops(byte[][])} of the keys taken before the write ran.
     */
    public static CompletableFuture<Void> confirm(ClusterNode node, Replicator replicator, byte[][] keys,
                                                  long deadlineNanos, long[] dropsAtWrite, Runnable unlock) {
        HeldWrite w = new HeldWrite(node, replicator, keys, dropsAtWrite, unlock);
        node.heldWriteStarted(keys);
        // orTimeout, not a delayed task: its timer is cancelled when the write is confirmed in time.
        w.answer.orTimeout(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        w.attempt();
        return w.answer.exceptionallyCompose(e -> CompletableFuture.failedFuture(
                unwrap(e) instanceof TimeoutException ? new UnreplicatedException(w.unconfirmed()) : unwrap(e)));
    }

    /** The UNREPLICATED text: what happened, and what it means for the client. */
    private String unconfirmed() {
        return "the write ran on " + node.topology().self().id() + " but its backups have not confirmed it ("
                + lastFailure + "); it stays invisible until they do, then it is visible and kept; if this node fails"
                + " first it is lost, never having been seen. Treat it as a timeout: reading the key waits for the"
                + " outcome";
    }

    private void attempt() {
        ClusterNode.Topology t = node.installedTopology();
        if (t != lastTopology) {
            // A new table: its backups may still be installing it and refuse the first attempts, for milliseconds, so
            // the pauses start short again (grown to a peer timeout, they held the keys a second past a failover).
            lastTopology = t;
            pauseMillis = FIRST_PAUSE_MILLIS;
        }
        boolean dropped = !java.util.Arrays.equals(dropsAtWrite, node.drops(keys));
        if (node.closed() || !t.serving() || !primaryOfAll(t, keys) || dropped) {
            // Dropped: this node was excluded and included again (its store emptied), or the keys' slots moved away
            // and back (purged), between two attempts. What the store holds now is not the write's state: sending
            // it would delete the keys on the backups (they were absent here), acknowledged values included. The
            // write is lost unseen; the keys are fetched from their freshest holder.
            lastFailure = node.closed() ? "this node is closing" : dropped ? "this node dropped its copies of the keys'"
                    + " slots since (excluded and included again, or the slots moved away and back)"
                    : "this node no longer serves the keys as primary";
            answer.completeExceptionally(new UnreplicatedException(unconfirmed()));
            // Its value stays here unconfirmed: this copy of the keys' slots may differ from the others' (see
            // ClusterNode#heldWriteEnded: marked, and repaired from the new primary where this node still owns them).
            node.heldWriteEnded(keys, false);
            unlock.run();
            return;
        }
        CompletableFuture<Void> sent;
        try {
            sent = replicator.replicate(keys, t);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((v, e) -> {
            if (e == null) {
                node.heldWriteEnded(keys, true);
                unlock.run();
                answer.complete(null);
                return;
            }
            Throwable cause = unwrap(e);
            lastFailure = cause instanceof UnreplicatedException u ? u.getMessage() : String.valueOf(cause);
            long pause = pauseMillis;
            pauseMillis = Math.min(pauseMillis * 2, Math.max(FIRST_PAUSE_MILLIS,
                    node.settings().peerTimeout().toMillis()));
            node.retry(t, pause, this::attempt); // at once if a new table replaced the backup that failed
        });
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    /** Whether this node is the primary of every one of {@code keys}' slots under {@code t}. */
    public static boolean primaryOfAll(ClusterNode.Topology t, byte[][] keys) {
        if (!t.table().isOwned()) {
            return false;
        }
        for (byte[] key : keys) {
            if (!t.isSelf(t.table().primary(SlotHash.slot(key)))) {
                return false;
            }
        }
        return true;
    }
}
