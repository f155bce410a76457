package io.kvtier.bench.load;

import io.kvtier.client.Reply;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One slot of concurrency: a sender (a connection, or a cluster client's share of its connections) plus the
 * statistics of the tasks it runs, one task at a time. A task may have several commands in flight on the lane
 * (LMCache's gathered GETs); the load generator gives each sender {@code pipeline} lanes.
 *
 * <p>Each command's latency runs from its send start to its reply (the client completes the future when the last
 * reply byte is decoded); the first command of a task starts its clock at the task's start, which under an
 * open-loop schedule is the intended send time. Errors (error replies, timeouts, a closed connection) are counted
 * and never recorded as latencies; misses are counted apart from errors. Reply buffers are released here.
 *
 * <p>Thread-safe: commands may be sent from the load generator's thread or from event loops.
 */
public final class Lane {
    private static final byte[] SET = ascii("SET");
    private static final byte[] GET = ascii("GET");
    private static final byte[] EXISTS = ascii("EXISTS");
    private static final long NO_PENDING_START = Long.MIN_VALUE;

    private final CommandSender sender;
    private final Map<String, OpStats> stats = new LinkedHashMap<>();
    private final Payloads payloads;
    private final LongAdder ops;
    private final LongAdder bytes;
    private final AtomicLong pendingStart = new AtomicLong(NO_PENDING_START);
    private volatile long taskStart;

    Lane(CommandSender sender, List<String> opNames, Payloads payloads, LongAdder ops, LongAdder bytes) {
        this.sender = sender;
        this.payloads = payloads;
        this.ops = ops;
        this.bytes = bytes;
        opNames.forEach(op -> stats.put(op, new OpStats()));
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    void beginTask(long startNanos) {
        taskStart = startNanos;
        pendingStart.set(startNanos);
    }

    /** When the current task started: its intended send time under an open loop. */
    public long taskStartNanos() {
        return taskStart;
    }

    boolean isOpen() {
        return sender.isOpen();
    }

    /** The statistics of an operation the phase declared. */
    public OpStats stats(String op) {
        OpStats s = stats.get(op);
        if (s == null) {
            throw new IllegalArgumentException("operation '" + op + "' is not declared by the phase " + stats.keySet());
        }
        return s;
    }

    /** {@code SET key value}: OK, or ERROR for anything but {@code +OK}. */
    public CompletableFuture<Outcome> set(String op, byte[] key, long version, int size) {
        OpStats s = stats(op);
        ByteBuf value = payloads.value(key, version, size);
        return send(s, key, SET, key, value).handle((reply, failure) -> {
            try {
                if (failure == null && reply instanceof Reply.Simple(String text) && text.equals("OK")) {
                    s.done(size);
                    counted(size);
                    return Outcome.OK;
                }
                return error(s, reply, failure);
            } finally {
                release(reply);
            }
        });
    }

    /** {@code GET key}: OK with a value (checked against {@code expectedSize} and, if verifying, its bytes). */
    public CompletableFuture<Outcome> get(String op, byte[] key, int expectedSize) {
        OpStats s = stats(op);
        return send(s, key, GET, key).handle((reply, failure) -> {
            try {
                if (failure == null && reply instanceof Reply.Bulk(ByteBuf content)) {
                    int n = content.readableBytes();
                    s.hit(n, payloads.wrongBytes(key, expectedSize, content));
                    counted(n);
                    return Outcome.OK;
                }
                if (failure == null && reply instanceof Reply.Null) {
                    s.miss();
                    counted(0);
                    return Outcome.MISS;
                }
                return error(s, reply, failure);
            } finally {
                release(reply);
            }
        });
    }

    /** {@code EXISTS key}: OK for 1, MISS for 0. */
    public CompletableFuture<Outcome> exists(String op, byte[] key) {
        OpStats s = stats(op);
        return send(s, key, EXISTS, key).handle((reply, failure) -> {
            try {
                if (failure == null && reply instanceof Reply.Int(long n) && (n == 0 || n == 1)) {
                    if (n == 1) {
                        s.hit(0, 0);
                    } else {
                        s.miss();
                    }
                    counted(0);
                    return n == 1 ? Outcome.OK : Outcome.MISS;
                }
                return error(s, reply, failure);
            } finally {
                release(reply);
            }
        });
    }

    /** Sends and records the latency of everything but errors; a send that throws becomes a failed future. */
    private CompletableFuture<Reply> send(OpStats s, byte[] key, Object... args) {
        long now = System.nanoTime();
        long pending = pendingStart.getAndSet(NO_PENDING_START);
        long start = pending == NO_PENDING_START ? now : Math.min(pending, now);
        CompletableFuture<Reply> sent;
        try {
            sent = sender.send(key, args);
        } catch (RuntimeException e) {
            // send() owns ByteBuf arguments even when it throws: nothing to release here.
            sent = CompletableFuture.failedFuture(e);
        }
        return sent.whenComplete((reply, failure) -> {
            if (failure == null && !(reply instanceof Reply.Error)) {
                s.recordLatency(System.nanoTime() - start);
            }
        });
    }

    private Outcome error(OpStats s, Reply reply, Throwable failure) {
        s.error(describe(reply, failure));
        counted(0);
        return Outcome.ERROR;
    }

    private void counted(long n) {
        ops.increment();
        bytes.add(n);
    }

    static String describe(Reply reply, Throwable failure) {
        if (failure != null) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            return cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
        }
        if (reply instanceof Reply.Error(String message)) {
            return message;
        }
        return "unexpected reply " + reply;
    }

    private static void release(Reply reply) {
        if (reply != null) {
            Reply.release(reply);
        }
    }
}
