package io.kvtier.server.net;

import io.kvtier.resp.RequestBudget;
import io.kvtier.resp.RespCommand;
import io.kvtier.resp.RespDecoder;
import io.kvtier.resp.RespException;
import io.kvtier.resp.RespWriter;
import io.kvtier.server.command.Dispatcher;
import io.kvtier.server.command.ServerContext;
import io.kvtier.server.command.Session;
import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.fatal.FatalErrorHandler;
import io.kvtier.server.reply.Reply;
import io.kvtier.server.value.RequestMemory;
import io.kvtier.server.value.StoreSinkFactory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection. Commands run strictly one after another, as in Redis: a command that completes
 * asynchronously (disk read, memory wait, durable delete) pauses processing, and reading from the socket stops while
 * the connection is paused, waits for memory for a payload, or cannot write (a slow reader): so neither buffered
 * input nor buffered output grows beyond one read and one reply. On a plain connection, reads inside a payload bound
 * for memory land in the value's pages ({@link PayloadLandingAllocator}); behind TLS the bytes come decrypted out of
 * the SslHandler's buffers and are copied as any other input. A request in progress holds heap and memory only within
 * the bounds of {@link RequestMemory} and {@link ClientLimits}; a once-a-second tick enforces the idle and read
 * timeouts and notices a peer that closed while reading is paused. An {@code Error} while serving the connection
 * closes it (a StackOverflowError) or stops the process ({@link ServerContext#fatal}). Event-loop confined.
 */
public final class ConnectionHandler extends ChannelInboundHandlerAdapter implements PayloadLandingAllocator.Landing {
    private static final Logger log = LoggerFactory.getLogger(ConnectionHandler.class);
    /** Linux TCP states (tcp_states.h) in which the peer has closed its side. */
    private static final int TCP_CLOSE = 7;
    private static final int TCP_CLOSE_WAIT = 8;

    /** How a connection's bytes arrive, which decides whether reads may land in a payload's pages. */
    public enum Transport {
        /** Straight from the socket: this handler is the pipeline's first, and payload reads land in place. */
        PLAIN,
        /** Decrypted by an SslHandler in front of this handler: no landing (the socket read holds ciphertext). */
        TLS
    }

    private final ServerContext server;
    private final Transport transport;
    private ChannelHandlerContext ctx;
    private Session session;
    private RespDecoder decoder;
    private StoreSinkFactory sinks;
    private Reply reply;
    private ByteBuf input;
    /** The view handed out for the read in progress, if it lands in a payload's pages. */
    private ByteBuf landing;
    private boolean busy;
    private boolean closed;
    private ScheduledFuture<?> ticks;
    private ClientTimeouts timeouts;

    /** A plain connection's handler, the first of its pipeline. */
    public ConnectionHandler(ServerContext server) {
        this(server, Transport.PLAIN);
    }

    public ConnectionHandler(ServerContext server, Transport transport) {
        this.server = server;
        this.transport = transport;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        server.connectionsReceived.increment();
        reply = new Reply(ctx, server.metrics().errors(), server.netOutputBytes);
        if (!server.admitClient()) {
            server.connectionsRejected.increment();
            // Past Reply, as Redis writes it: a refused connection is no client, and its error is not counted
            // among error replies (INFO errorstats), only in rejected_connections.
            ByteBuf refusal = ctx.alloc().buffer();
            RespWriter.error(refusal, "ERR max number of clients reached");
            ctx.writeAndFlush(refusal);
            ctx.close();
            closed = true;
            return;
        }
        session = new Session(server.newClientId(), server, ctx.channel());
        server.sessions().put(session.id, session);
        RequestMemory memory = server.requestMemory();
        sinks = new StoreSinkFactory(server.store(), memory, ctx.alloc(), () -> ctx.executor().execute(this::process));
        RespDecoder.Limits limits = RespDecoder.Limits.defaults(server.options().maxValueBytes())
                .withMaxRequestBytes(server.options().clientLimits().queryBufferLimit());
        RequestBudget.Account heap = memory.heap().open(() -> ctx.executor().execute(() ->
                refuse(RespDecoder.clientMemoryError(memory.heap().limit()))));
        session.requestHeap(heap);
        decoder = new RespDecoder(limits, sinks, heap);
        decoder.setAuthenticated(session.authenticated());
        if (transport == Transport.PLAIN) {
            ctx.channel().config().setRecvByteBufAllocator(new PayloadLandingAllocator(this));
        }
        ctx.channel().config().setAutoRead(true);
        timeouts = new ClientTimeouts(server.options().clientLimits(), System.nanoTime());
        ticks = ctx.executor().scheduleAtFixedRate(() -> guarded(this::tick), 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (closed) {
            in.release();
            return;
        }
        server.netInputBytes.add(in.readableBytes());
        timeouts.read(in.readableBytes(), System.nanoTime());
        // Recognised by identity: on a plain connection this handler must be the pipeline's first, so that the view
        // reaches it as read (a cumulating handler in front, as TLS's, would keep the view while the next read lands
        // over it: hence no landing allocator behind TLS, and landing stays null there).
        if (in == landing) {
            landing = null;
            int n = in.readableBytes();
            server.netInputLandedBytes.add(n);
            in.release(); // the view; the bytes are already in the value
            decoder.payloadReceived(n);
            process();
            return;
        }
        input = input == null ? in : ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(ctx.alloc(), input, in);
        process();
    }

    @Override
    public ByteBuffer landingWindow() {
        if (closed || session == null || busy || input != null && input.isReadable()) {
            return null;
        }
        return decoder.payloadWindow(PayloadLandingAllocator.MIN_TAIL);
    }

    @Override
    public void landed(ByteBuf view) {
        landing = view;
    }

    /** Runs {@code step} for this connection; whatever it throws ends the connection (or the process) cleanly. */
    private void guarded(Runnable step) {
        try {
            step.run();
        } catch (Throwable t) {
            exceptionCaught(ctx, t);
        }
    }

    /** Commands one connection runs before it lets the other connections of its event loop have a turn. */
    static final int COMMANDS_PER_TURN = 1024;
    /** A continuation of this connection's input is queued on its event loop (event-loop confined). */
    private boolean yielded;

    private void process() {
        guarded(this::processInput);
    }

    /**
     * Decodes and runs commands until input runs out or something makes the connection wait; at most
     * {@link #COMMANDS_PER_TURN} at a time, then the connection yields its event loop to the others (a continuation is
     * queued behind their I/O, and its reading pauses meanwhile): one client pipelining tiny commands (or queuing
     * millions in MULTI) filled a whole loop turn, 16 reads of 64 KiB, and every other client on that loop waited
     * 100-200 ms.
     */
    private void processInput() {
        if (closed) {
            reply.discard(); // an asynchronous command that finished after the close may have written into it
            return;
        }
        if (yielded) {
            return; // its turn is queued; what arrives meanwhile waits in the input buffer
        }
        int ran = 0;
        while (!busy && ctx.channel().isWritable() && !sinks.backlogged()
                && (input != null && input.isReadable() || decoder.isWaitingForSink())) {
            RespCommand cmd;
            int before = input != null ? input.readerIndex() : 0;
            try {
                cmd = decoder.decode(input != null ? input : Unpooled.EMPTY_BUFFER);
            } catch (RespException e) {
                refuse(e.getMessage());
                return;
            }
            if (cmd == null) {
                break;
            }
            session.commandBytes = input != null ? input.readerIndex() - before : 0;
            execute(cmd);
            if (session.closeAfterReply()) {
                reply.flush();
                ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
                closed = true;
                return;
            }
            if (++ran >= COMMANDS_PER_TURN && input != null && input.isReadable()) {
                yielded = true;
                ctx.executor().execute(() -> {
                    yielded = false;
                    process();
                });
                break;
            }
        }
        sinks.flushSpool();
        reply.flush();
        if (input != null && !input.isReadable()) {
            input.release();
            input = null;
        } else if (input != null) {
            input.discardSomeReadBytes();
        }
        session.queryBuffer(input == null ? 0 : input.readableBytes(), input == null ? 0 : input.writableBytes());
        updateAutoRead();
    }

    private void execute(RespCommand cmd) {
        sinks.flushSpool();
        if (!session.inTransaction()) {
            sinks.requestDone(); // its reservations pass to the command; a transaction's, in finished() at its end
        }
        long now = System.nanoTime(); // the one clock read before the command: timeouts, CLIENT LIST, its latency
        timeouts.commandDone(now);
        CompletableFuture<Void> done;
        try {
            done = Dispatcher.dispatch(session, cmd, reply, now);
        } finally {
            cmd.release();
        }
        decoder.setAuthenticated(session.authenticated());
        if (done != null && !done.isDone()) {
            busy = true;
            done.whenComplete((v, e) -> ctx.executor().execute(() -> {
                busy = false;
                finished();
                timeouts.commandDone(System.nanoTime()); // the idle time counts from its end
                process();
            }));
        } else {
            finished(); // microseconds after the start: the clock read then stands for its end too
        }
    }

    /**
     * The command handed out last is over: its arguments' heap goes back to the budget. Inside MULTI the queued
     * commands keep theirs (heap and payload reservations stay charged to this connection) until EXEC or DISCARD.
     */
    private void finished() {
        if (!session.inTransaction()) {
            sinks.requestDone();
            decoder.commandFinished();
        }
    }

    /** Answers {@code error} and closes the connection once it is written (a request over a limit, a timeout). */
    private void refuse(String error) {
        if (closed) {
            return;
        }
        log.debug("closing connection {}: {}", ctx.channel().remoteAddress(), error);
        closed = true;
        ctx.channel().config().setAutoRead(false);
        // At once, not when a peer that reads nothing lets the error out; and before the error is written, so that a
        // client that has read it (and asks INFO on another connection) finds the memory given back.
        releaseRequest();
        reply.error(error);
        reply.flush();
        ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
        ctx.executor().schedule(() -> {
            ctx.close();
        }, 1, TimeUnit.SECONDS);
    }

    /** Once a second: a peer gone while reading is paused, the idle timeout, the read timeout. */
    private void tick() {
        if (closed) {
            ticks.cancel(false);
            return;
        }
        if (!ctx.channel().config().isAutoRead() && peerClosed()) {
            log.debug("connection {} closed by the peer while paused", ctx.channel().remoteAddress());
            ctx.close(); // Redis frees a client at EOF too; nothing it sent after this could be answered
            return;
        }
        boolean waitingForClient = !busy && ctx.channel().config().isAutoRead()
                && (decoder.inRequest() || input != null && input.isReadable());
        switch (timeouts.check(System.nanoTime(), waitingForClient, busy)) {
            case IDLE -> {
                log.debug("closing connection {}: idle for longer than --timeout", ctx.channel().remoteAddress());
                ctx.close();
            }
            case TOO_SLOW -> refuse(timeouts.tooSlowError());
            case OK -> { }
        }
    }

    /** Whether the peer has closed its side (Linux, epoll): seen without reading, so also while reading is paused. */
    private boolean peerClosed() {
        if (ctx.channel() instanceof EpollSocketChannel epoll) {
            int state = epoll.tcpInfo().state();
            return state == TCP_CLOSE_WAIT || state == TCP_CLOSE;
        }
        return false;
    }

    private void updateAutoRead() {
        boolean read = !closed && !busy && !yielded && !decoder.isWaitingForSink() && !sinks.backlogged()
                && ctx.channel().isWritable();
        if (ctx.channel().config().isAutoRead() != read) {
            ctx.channel().config().setAutoRead(read);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            process();
        } else if (!session.authenticated() && !closed) {
            // A client that has not given the password yet and lets its replies (errors, by definition) pile up past
            // the write buffer's high-water mark is dropped, as Redis drops it, rather than held open for ever.
            log.debug("closing unauthenticated connection {}: its replies are not read",
                    ctx.channel().remoteAddress());
            closed = true;
            ctx.channel().config().setAutoRead(false);
            releaseRequest();
            ctx.close();
        } else {
            updateAutoRead();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        if (ticks != null) {
            ticks.cancel(false);
        }
        if (session != null) {
            server.clientLeft();
            server.sessions().remove(session.id);
            if (server.sharedLeases() != null) {
                server.sharedLeases().sessionClosed(session.id); // a killed client's leases end with its socket
            }
        }
        releaseRequest();
        if (reply != null) {
            reply.discard();
        }
    }

    /** Gives back everything the request in progress holds: heap, reservations, spool, buffered input. Idempotent. */
    private void releaseRequest() {
        if (session != null) {
            session.discardTransaction();
            decoder.close();
            sinks.close();
        }
        if (input != null) {
            input.release();
            input = null;
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof Error && !(cause instanceof StackOverflowError)) {
            server.fatal(FatalErrorHandler.Source.CLIENT_CONNECTION, cause);
        } else if (cause instanceof IOException) {
            log.debug("connection {}: {}", ctx.channel().remoteAddress(), cause.toString());
        } else if (cause instanceof io.netty.handler.codec.DecoderException
                && cause.getCause() instanceof javax.net.ssl.SSLException tls) {
            // A failed handshake (no client certificate, a plain client on the TLS port): the client's doing, and
            // frequent enough from scanners that a stack trace each would flood the log.
            log.debug("connection {}: TLS: {}", ctx.channel().remoteAddress(), tls.getMessage());
        } else {
            log.warn("connection {} failed", ctx.channel().remoteAddress(), cause);
        }
        ctx.close();
    }
}
