package io.kvtier.server.net;

import io.kvtier.resp.RespCommand;
import io.kvtier.resp.RespDecoder;
import io.kvtier.resp.RespException;
import io.kvtier.server.ServerContext;
import io.kvtier.server.command.Dispatcher;
import io.kvtier.server.command.Session;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection. Commands run strictly one after another, as in Redis: a command that completes
 * asynchronously (disk read, memory wait, durable delete) pauses processing, and reading from the socket stops while
 * the connection is paused, waits for memory for a payload, or cannot write (a slow reader): so neither buffered
 * input nor buffered output grows beyond one read and one reply. Reads inside a payload bound for memory land
 * in the value's pages ({@link PayloadLandingAllocator}). Event-loop confined.
 */
public final class ConnectionHandler extends ChannelInboundHandlerAdapter implements PayloadLandingAllocator.Landing {
    private static final Logger log = LoggerFactory.getLogger(ConnectionHandler.class);

    private final ServerContext server;
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

    public ConnectionHandler(ServerContext server) {
        this.server = server;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        server.connectionsReceived.increment();
        reply = new Reply(ctx);
        if (!server.admitClient()) {
            server.connectionsRejected.increment();
            reply.error("ERR max number of clients reached");
            reply.flush();
            ctx.close();
            closed = true;
            return;
        }
        session = new Session(server.newClientId(), server, ctx.channel());
        server.sessions().put(session.id, session);
        sinks = new StoreSinkFactory(server.store(), ctx.alloc(), () -> ctx.executor().execute(this::process));
        decoder = new RespDecoder(RespDecoder.Limits.defaults(server.options().maxValueBytes()), sinks);
        decoder.setAuthenticated(session.authenticated());
        ctx.channel().config().setRecvByteBufAllocator(new PayloadLandingAllocator(this));
        ctx.channel().config().setAutoRead(true);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (closed) {
            in.release();
            return;
        }
        server.netInputBytes.add(in.readableBytes());
        // Recognised by identity: this handler must be the pipeline's first, so that the view reaches it as read
        // (a cumulating handler in front, TLS say, would keep the view while the next read lands over it).
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

    /** Decodes and runs commands until input runs out or something makes the connection wait. */
    private void process() {
        if (closed) {
            reply.discard(); // an asynchronous command that finished after the close may have written into it
            return;
        }
        while (!busy && ctx.channel().isWritable() && !sinks.backlogged()
                && (input != null && input.isReadable() || decoder.isWaitingForSink())) {
            RespCommand cmd;
            try {
                cmd = decoder.decode(input != null ? input : Unpooled.EMPTY_BUFFER);
            } catch (RespException e) {
                reply.error(e.getMessage());
                reply.flush();
                ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
                closed = true;
                return;
            }
            if (cmd == null) {
                break;
            }
            execute(cmd);
            if (session.closeAfterReply()) {
                reply.flush();
                ctx.writeAndFlush(ctx.alloc().buffer(0)).addListener(ChannelFutureListener.CLOSE);
                closed = true;
                return;
            }
        }
        reply.flush();
        if (input != null && !input.isReadable()) {
            input.release();
            input = null;
        } else if (input != null) {
            input.discardSomeReadBytes();
        }
        updateAutoRead();
    }

    private void execute(RespCommand cmd) {
        CompletableFuture<Void> done;
        try {
            done = Dispatcher.dispatch(session, cmd, reply);
        } finally {
            cmd.release();
        }
        decoder.setAuthenticated(session.authenticated());
        if (done != null && !done.isDone()) {
            busy = true;
            done.whenComplete((v, e) -> ctx.executor().execute(() -> {
                busy = false;
                process();
            }));
        }
    }

    private void updateAutoRead() {
        boolean read = !closed && !busy && !decoder.isWaitingForSink() && !sinks.backlogged()
                && ctx.channel().isWritable();
        if (ctx.channel().config().isAutoRead() != read) {
            ctx.channel().config().setAutoRead(read);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            process();
        } else {
            updateAutoRead();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        if (session != null) {
            server.clientLeft();
            server.sessions().remove(session.id);
            decoder.close();
            sinks.close();
        }
        if (input != null) {
            input.release();
            input = null;
        }
        if (reply != null) {
            reply.discard();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof IOException) {
            log.debug("connection {}: {}", ctx.channel().remoteAddress(), cause.toString());
        } else {
            log.warn("connection {} failed", ctx.channel().remoteAddress(), cause);
        }
        ctx.close();
    }
}
