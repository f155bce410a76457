package io.kvtier.cluster.node;

import io.kvtier.client.Reply;
import io.kvtier.client.cluster.SlotHash;
import io.kvtier.cluster.Member;
import io.kvtier.cluster.error.UnreplicatedException;
import io.kvtier.store.ValueRef;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Primary-to-backup replication by state: after a write, each touched key's resulting value (or its absence) is sent
 * to the slot's backups as {@code KVT.REPL epoch version key expireAt value} or {@code KVT.RDEL epoch version key},
 * each state with a new {@link StateVersions version} so that a backup never applies an older state over a newer one.
 * Shipping state rather than commands keeps conditional commands (SETNX, SET XX, GETEX) from diverging on a backup
 * that is still importing. The caller holds the keys' locks until the returned future completes, so one key's states
 * reach a backup in the order they were applied. What has been sent and not acknowledged is the replication lag,
 * counted in {@link ClusterNode#replicationBacklog}.
 */
public final class Replicator {
    /** The error code of a backup's refusal of a state older than one it applied: {@code STALEVERSION newest ...}. */
    public static final String STALE_VERSION = "STALEVERSION";

    private final ClusterNode node;
    private final DiskValueReader diskReads;
    private final StateVersions versions;

    public Replicator(ClusterNode node, DiskValueReader diskReads) {
        this.node = node;
        this.diskReads = diskReads;
        this.versions = node.versions();
    }

    /** The versions this node stamps on the states it sends and checks on those it receives. */
    public StateVersions versions() {
        return versions;
    }

    /**
     * Sends the state of {@code keys} to their backups under topology {@code t}; completes when every backup
     * acknowledged, or fails with the first refusal or transport error (UNREPLICATED ...).
     */
    public CompletableFuture<Void> replicate(byte[][] keys, ClusterNode.Topology t) {
        if (keys.length > 1) {
            return replicateTogether(keys, t);
        }
        long startNanos = System.nanoTime();
        List<CompletableFuture<Void>> sends = new ArrayList<>();
        for (byte[] key : keys) {
            List<Member> backups = new ArrayList<>(t.table().owners(SlotHash.slot(key)));
            backups.removeIf(t::isSelf);
            node.wroteLocally(key);
            ValueRef ref = node.store().get(key);
            if (backups.isEmpty()) {
                if (ref != null) {
                    ref.close();
                }
                continue;
            }
            long epoch = t.table().epoch();
            long timeout = node.settings().peerTimeout().toMillis();
            String version = Long.toString(ref == null ? versions.next(epoch) : versionToSend(key, ref, epoch));
            if (ref == null) {
                for (Member b : backups) {
                    sends.add(tracked(1, key.length, checked(b, node.send(ClusterNode.Lane.REPLICATION, b,
                            "KVT.RDEL", ClusterNode.requestEpoch(epoch, timeout), version, key))));
                }
                continue;
            }
            long expireAt = ref.expireAt();
            long payload = (key.length + ref.length()) * backups.size();
            sends.add(tracked(backups.size(), payload, bytesOf(ref).thenCompose(buf -> {
                List<CompletableFuture<Void>> each = new ArrayList<>();
                String stamp = ClusterNode.requestEpoch(epoch, timeout); // its deadline starts once the bytes are read
                for (Member b : backups) {
                    each.add(checked(b, node.send(ClusterNode.Lane.REPLICATION, b, "KVT.REPL", stamp, version,
                            key, Long.toString(expireAt), buf.retainedDuplicate())));
                }
                return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
                        .whenComplete((v, e) -> buf.release());
            })));
        }
        if (sends.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return counted(startNanos, sends.size(), CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)));
    }

    /**
     * The state of several keys written by one command or transaction, as one unit: each backup gets one
     * {@code KVT.REPLM epoch version key expireAt|- value ...} (one version for the unit) with the keys it backs, and
     * applies them all while holding them (no reader there sees some applied and not the others; a primary that dies
     * mid-way left it all or nothing on each backup that acknowledged).
     */
    private CompletableFuture<Void> replicateTogether(byte[][] keys, ClusterNode.Topology t) {
        long startNanos = System.nanoTime();
        java.util.Map<Member, List<Integer>> byBackup = new java.util.LinkedHashMap<>();
        List<CompletableFuture<ByteBuf>> values = new ArrayList<>();
        long[] expireAt = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            node.wroteLocally(keys[i]);
            for (Member b : t.table().owners(SlotHash.slot(keys[i]))) {
                if (!t.isSelf(b)) {
                    byBackup.computeIfAbsent(b, x -> new ArrayList<>()).add(i);
                }
            }
        }
        if (byBackup.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        long payload = 0;
        long epoch = t.table().epoch();
        long unit = 0;
        for (int i = 0; i < keys.length; i++) {
            ValueRef ref = node.store().get(keys[i]);
            expireAt[i] = ref == null ? -1 : ref.expireAt();
            payload += keys[i].length + (ref == null ? 0 : ref.length());
            unit = ref == null ? unit : Math.max(unit, ref.version());
            values.add(ref == null ? CompletableFuture.completedFuture(null) : bytesOf(ref));
        }
        if (unit == 0 || unit <= versions.refusedNewest()) {
            unit = versions.next(epoch); // all deletes, or a retry after a refusal: a new number
        }
        for (byte[] key : keys) {
            node.store().setVersion(key, unit); // one version for the unit, here as on the backups
        }
        long timeout = node.settings().peerTimeout().toMillis();
        String version = Long.toString(unit);
        int calls = byBackup.size();
        CompletableFuture<Void> read = CompletableFuture.allOf(values.toArray(CompletableFuture[]::new));
        CompletableFuture<Void> sent = tracked(calls, payload * calls, read.thenCompose(v -> {
            String stamp = ClusterNode.requestEpoch(epoch, timeout); // its deadline starts once the bytes are read
            List<CompletableFuture<Void>> each = new ArrayList<>();
            byBackup.forEach((backup, indexes) -> {
                Object[] args = new Object[3 + 3 * indexes.size()];
                args[0] = "KVT.REPLM";
                args[1] = stamp;
                args[2] = version;
                int n = 3;
                for (int i : indexes) {
                    ByteBuf value = values.get(i).join();
                    args[n++] = keys[i];
                    args[n++] = value == null ? "-" : Long.toString(expireAt[i]);
                    args[n++] = value == null ? new byte[0] : value.retainedDuplicate();
                }
                each.add(checked(backup, node.send(ClusterNode.Lane.REPLICATION, backup, args)));
            });
            return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
        })).whenComplete((v, e) -> {
            for (CompletableFuture<ByteBuf> f : values) {
                f.thenAccept(b -> {
                    if (b != null) {
                        b.release();
                    }
                });
            }
        });
        return counted(startNanos, calls, sent);
    }

    /**
     * The version to send {@code key}'s state with: the one its value carries (the same on every node that holds it),
     * unless a backup refused it as older than a state it has (another key of its bucket, from an earlier primary):
     * then a new one, given to the value here too, so that primary and backups keep agreeing.
     */
    private long versionToSend(byte[] key, ValueRef ref, long epoch) {
        long v = ref.version();
        if (v == 0 || v <= versions.refusedNewest()) {
            v = versions.next(epoch);
            node.store().setVersion(key, v);
        }
        return v;
    }

    /**
     * Times a replicated write started at {@code startNanos} in the backlog until {@code sent} (its {@code calls}
     * calls) completes, and counts it as replicated or failed.
     */
    private CompletableFuture<Void> counted(long startNanos, int calls, CompletableFuture<Void> sent) {
        int timed = node.replicationBacklog.writeStarted(startNanos);
        return sent.whenComplete((v, e) -> {
            node.replicationBacklog.writeEnded(timed);
            if (e != null) {
                node.counters.replicationFailures().increment();
            } else {
                node.counters.replicated().add(calls);
            }
        });
    }

    /** Counts {@code calls} calls carrying {@code payload} bytes as in flight until {@code sent} completes. */
    private CompletableFuture<Void> tracked(int calls, long payload, CompletableFuture<Void> sent) {
        node.replicationBacklog.callsStarted(calls, payload);
        sent.whenComplete((v, e) -> node.replicationBacklog.callsEnded(calls, payload));
        return sent;
    }

    /** The value's bytes in one buffer (a copy for memory values; a copy of the staged read for disk ones). */
    private CompletableFuture<ByteBuf> bytesOf(ValueRef ref) {
        if (ref.inMemory()) {
            try (ref) {
                ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer((int) ref.length());
                for (ByteBuffer part : ref.memory().buffers()) {
                    buf.writeBytes(part);
                }
                return CompletableFuture.completedFuture(buf);
            }
        }
        return diskReads.read(ref);
    }

    /**
     * A backup's answer as a completion; a failure is UNREPLICATED, not TRYAGAIN: the write has run here, so neither
     * a proxy nor a cluster client may resend it as if it had not (SETNX, GETDEL and the like would answer wrongly).
     */
    private CompletableFuture<Void> checked(Member backup, CompletableFuture<Reply> sent) {
        return sent.handle((r, e) -> {
            try {
                if (e != null) {
                    Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                            ? e.getCause() : e;
                    throw unreplicated(backup, "failed: " + cause.getMessage());
                }
                if (r instanceof Reply.Error err) {
                    observeRefusal(err.message());
                    throw unreplicated(backup, "refused it: " + err.message());
                }
                return null;
            } finally {
                Reply.release(r);
            }
        });
    }

    /**
     * A backup's {@code STALEVERSION newest ...} refusal: a key of the state's bucket there has a newer version (from
     * an earlier primary, or a collision); the next attempt's version is made to exceed it.
     */
    private void observeRefusal(String message) {
        if (message.startsWith(STALE_VERSION + " ")) {
            int end = message.indexOf(' ', STALE_VERSION.length() + 1);
            try {
                versions.refusedBelow(Long.parseLong(message.substring(STALE_VERSION.length() + 1,
                        end < 0 ? message.length() : end)));
            } catch (NumberFormatException malformed) {
                // Not from a kvtier backup: the next version is new anyway.
            }
        }
    }

    private UnreplicatedException unreplicated(Member backup, String what) {
        return new UnreplicatedException(backup.id() + " " + what);
    }
}
