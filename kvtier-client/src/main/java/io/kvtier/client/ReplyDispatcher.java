package io.kvtier.client;

import io.kvtier.resp.RespReplyDecoder;
import io.kvtier.resp.RespReplyException;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.AbstractEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Design
 * ------
 * Redis answers the commands of one connection in order, so matching replies to commands needs nothing but a FIFO of
 * pending futures: a command joins the queue in the same event-loop task that writes it, and each decoded reply
 * completes the queue's head.
 *
 * Timeouts: every command waits at most commandTimeout from send(). Deadlines grow along the queue (up to the
 * jitter between sending threads), so only the head can be the first to expire, and one scheduled task suffices: it
 * fires at the head's deadline, and re-arms for the new head if that one was answered meanwhile. A command that
 * times out leaves the stream at an unknown position (its reply may still come), so the connection is closed.
 *
 * Closing: whatever closes the connection (client, server, timeout, I/O or protocol error) goes through closeWith(),
 * which fails every pending future with one ConnectionClosedException naming the reason and refuses later writes.
 *
 * Cumulation: COMPOSITE_CUMULATOR, so a read that arrives behind a partial line is linked, not copied; a bulk
 * payload is then copied exactly once, by the decoder, into its own buffer.
 */

/**
 * The channel handler behind a {@link RespConnection}: writes commands, decodes replies and completes the commands'
 * futures in order, enforces the command timeout. Confined to the channel's event loop, except {@link #submit} and the
 * volatile state it reads.
 */
final class ReplyDispatcher extends ByteToMessageDecoder {
    private static final Logger log = LoggerFactory.getLogger(ReplyDispatcher.class);
    /** Caps timeouts at ~73 years so that deadlines never overflow. */
    private static final long MAX_TIMEOUT_NANOS = Long.MAX_VALUE / 4;

    private record Pending(CompletableFuture<Reply> future, long deadline) {
    }

    private final String remote;
    private final Duration commandTimeout;
    private final long commandTimeoutNanos;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private ChannelHandlerContext ctx;
    private RespReplyDecoder<Reply> decoder;
    private ScheduledFuture<?> timer;
    /** Set once, on the event loop, when the connection starts closing; later writes fail with it. */
    private volatile ConnectionClosedException closed;

    ReplyDispatcher(String remote, Duration commandTimeout) {
        this.remote = remote;
        this.commandTimeout = commandTimeout;
        this.commandTimeoutNanos = commandTimeout.compareTo(Duration.ofNanos(MAX_TIMEOUT_NANOS)) > 0
                ? MAX_TIMEOUT_NANOS : commandTimeout.toNanos();
        setCumulator(COMPOSITE_CUMULATOR);
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        this.decoder = new RespReplyDecoder<>(RespReplyDecoder.Limits.defaults(), ctx.alloc(),
                ClientReplyFactory.INSTANCE);
    }

    /** Sends one encoded command from any thread; {@code future} completes with its reply. */
    void submit(ByteBuf[] parts, CompletableFuture<Reply> future, boolean flush) {
        long deadline = System.nanoTime() + commandTimeoutNanos;
        inFlight.incrementAndGet();
        EventLoop loop = ctx.channel().eventLoop();
        if (loop.inEventLoop()) {
            write(parts, future, deadline, flush);
            return;
        }
        Runnable task = () -> write(parts, future, deadline, flush);
        try {
            // Unflushed writes need not wake the loop: the flush() that must follow will, and runs after them.
            if (!flush && loop instanceof AbstractEventExecutor executor) {
                executor.lazyExecute(task);
            } else {
                loop.execute(task);
            }
        } catch (RejectedExecutionException e) {
            refuse(parts, future, new ConnectionClosedException("cannot send to " + remote
                    + ": its ClientResources are closed", e));
        }
    }

    int inFlight() {
        return inFlight.get();
    }

    boolean isOpen() {
        return closed == null;
    }

    private void write(ByteBuf[] parts, CompletableFuture<Reply> future, long deadline, boolean flush) {
        ConnectionClosedException cause = closed;
        if (cause != null) {
            refuse(parts, future, cause);
            return;
        }
        pending.add(new Pending(future, deadline));
        for (ByteBuf part : parts) {
            ctx.write(part, ctx.voidPromise());
        }
        if (flush) {
            ctx.flush();
        }
        armTimer();
    }

    private void refuse(ByteBuf[] parts, CompletableFuture<Reply> future, ConnectionClosedException cause) {
        for (ByteBuf part : parts) {
            part.release();
        }
        inFlight.decrementAndGet();
        future.completeExceptionally(cause);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        try {
            while (closed == null) {
                Reply reply = decoder.decode(in);
                if (reply == null) {
                    return;
                }
                dispatch(reply);
            }
        } catch (RespReplyException e) {
            closeWith(new ConnectionClosedException("connection to " + remote + " closed: the server sent a reply"
                    + " this client cannot decode", e));
        }
        in.skipBytes(in.readableBytes());
    }

    private void dispatch(Reply reply) {
        Pending head = pending.poll();
        if (head == null) {
            Reply.release(reply);
            if (reply instanceof Reply.Aggregate push && push.type() == '>') {
                log.debug("dropped a RESP3 push from {} that no command waited for", remote);
                return;
            }
            closeWith(new ConnectionClosedException("connection to " + remote + " closed: the server sent a reply"
                    + " no command waited for", null));
            return;
        }
        inFlight.decrementAndGet();
        if (!head.future().complete(reply)) {
            Reply.release(reply);
        }
    }

    private void armTimer() {
        Pending head = pending.peek();
        if (timer == null && head != null && closed == null) {
            long delay = Math.max(0, head.deadline() - System.nanoTime());
            timer = ctx.executor().schedule(this::onTimer, delay, TimeUnit.NANOSECONDS);
        }
    }

    private void onTimer() {
        timer = null;
        Pending head = pending.peek();
        if (head == null || closed != null) {
            return;
        }
        if (System.nanoTime() - head.deadline() < 0) {
            armTimer();
            return;
        }
        pending.poll();
        inFlight.decrementAndGet();
        RespTimeoutException timeout = new RespTimeoutException(remote, commandTimeout);
        // Closed first, so that whoever sees the timeout also sees the connection closed.
        closeWith(new ConnectionClosedException("connection to " + remote + " closed: an earlier command got no reply"
                + " within " + commandTimeout, timeout));
        head.future().completeExceptionally(timeout);
    }

    /** Fails every pending command with {@code cause}, refuses later ones, and closes the channel. Idempotent. */
    void closeWith(ConnectionClosedException cause) {
        if (closed != null) {
            return;
        }
        closed = cause;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        for (Pending head; (head = pending.poll()) != null; ) {
            inFlight.decrementAndGet();
            head.future().completeExceptionally(cause);
        }
        ctx.close();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        super.channelInactive(ctx);
        closeWith(new ConnectionClosedException("connection to " + remote + " was closed by the server", null));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("connection to {} failed", remote, cause);
        // A socket error (reset by peer, broken pipe) is the peer or the network ending the connection, noticed on a
        // read or a write before the close itself: the same loss as channelInactive's, said the same way.
        String why = cause instanceof java.io.IOException
                ? "was closed by the server or the network (" + cause.getMessage() + ")"
                : "closed after an error: " + cause;
        closeWith(new ConnectionClosedException("connection to " + remote + " " + why, cause));
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        closeWith(new ConnectionClosedException("connection to " + remote + " closed", null));
        decoder.close();
    }
}
