package io.kvtier.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;

/**
 * One pipelined RESP connection: commands are written as they are sent, and their replies complete the returned
 * futures in order. Thread-safe; futures complete on the connection's I/O thread, so callbacks attached to them must
 * not block. RESP3 push messages ({@code >}) are taken as replies to the oldest pending command, so do not use
 * pub/sub or client tracking on these connections.
 */
public final class RespConnection implements AutoCloseable {
    private final Channel channel;
    private final ReplyDispatcher dispatcher;
    private final String remote;
    private volatile boolean autoFlush = true;

    private RespConnection(Channel channel, ReplyDispatcher dispatcher, String remote) {
        this.channel = channel;
        this.dispatcher = dispatcher;
        this.remote = remote;
    }

    /**
     * Connects to {@code host:port}. The future fails with the transport's exception, a {@link java.net.ConnectException}
     * when the port is closed or the server does not accept within {@link ClientOptions#connectTimeout()}
     * ({@link io.netty.channel.ConnectTimeoutException}), or with an IllegalStateException when {@code resources} are
     * closed.
     */
    public static CompletableFuture<RespConnection> connect(ClientResources resources, String host, int port,
            ClientOptions options) {
        return connect(resources, host, port, options, null);
    }

    /**
     * Like {@link #connect(ClientResources, String, int, ClientOptions)}, over TLS with {@code tls} (a client
     * context; null for plain TCP): the future completes once the handshake has succeeded, and fails with the
     * handshake's exception (an {@link javax.net.ssl.SSLException}) when it does not. The handshake has Netty's
     * 10 s limit.
     */
    public static CompletableFuture<RespConnection> connect(ClientResources resources, String host, int port,
            ClientOptions options, SslContext tls) {
        if (resources == null || host == null || options == null) {
            throw new IllegalArgumentException("resources, host and options are required");
        }
        if (tls != null && !tls.isClient()) {
            throw new IllegalArgumentException("a client TLS context is required, not a server's");
        }
        String remote = host + ":" + port;
        ReplyDispatcher dispatcher = new ReplyDispatcher(remote, options.commandTimeout());
        Bootstrap bootstrap = new Bootstrap().group(resources.group()).channel(resources.channelType())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        Math.clamp(options.connectTimeout().toMillis(), 1, Integer.MAX_VALUE))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .handler(tls == null ? dispatcher : new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(tls.newHandler(ch.alloc(), host, port), dispatcher);
                    }
                });
        CompletableFuture<RespConnection> result = new CompletableFuture<>();
        if (resources.group().isShuttingDown()) {
            // A closed group would drop the connect attempt's listener: fail here instead.
            result.completeExceptionally(new IllegalStateException("cannot connect to " + remote
                    + ": its ClientResources are closed"));
            return result;
        }
        try {
            bootstrap.connect(host, port).addListener((ChannelFuture connected) -> {
                if (!connected.isSuccess()) {
                    result.completeExceptionally(connected.cause());
                    return;
                }
                RespConnection connection = new RespConnection(connected.channel(), dispatcher, remote);
                SslHandler handshake = connected.channel().pipeline().get(SslHandler.class);
                if (handshake == null) {
                    if (!result.complete(connection)) {
                        connection.close();
                    }
                    return;
                }
                handshake.handshakeFuture().addListener(shaken -> {
                    if (!shaken.isSuccess()) {
                        connection.close();
                        result.completeExceptionally(shaken.cause());
                    } else if (!result.complete(connection)) {
                        connection.close();
                    }
                });
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new IllegalStateException("cannot connect to " + remote
                    + ": its ClientResources are closed", e));
        }
        return result;
    }

    /**
     * Sends one command. Pipelined: may be called again before earlier replies arrive; replies complete the futures
     * in order. An error reply completes the future normally with a {@link Reply.Error}.
     *
     * <p>Each argument is a {@code byte[]}, a {@code String} (sent as UTF-8) or a {@code ByteBuf}, whose readable
     * bytes are sent and which is then released: send always takes ownership of ByteBuf arguments, even when it
     * throws, so pass {@code buf.retainedDuplicate()} to send one payload buffer many times. ByteBufs of 16 KiB or
     * more are written as they are, without copying (keep them direct: a transport copies heap buffers).
     *
     * <p>The future fails with {@link RespTimeoutException} when no reply arrives within the command timeout (the
     * connection is then closed, since the position in the reply stream is lost), or with
     * {@link ConnectionClosedException} when the connection closes first.
     *
     * @throws IllegalArgumentException when there are no arguments, or one is null, released or of another type
     */
    public CompletableFuture<Reply> send(Object... args) {
        var parts = CommandEncoder.encode(channel.alloc(), args);
        CompletableFuture<Reply> future = new CompletableFuture<>();
        dispatcher.submit(parts, future, autoFlush);
        return future;
    }

    /**
     * Releases the ByteBuf arguments of a command that will not be {@link #send sent} after all (its connection could
     * not be had): what send would have taken ownership of. Buffers already released are skipped.
     */
    public static void releaseUnsent(Object... args) {
        for (Object a : args) {
            if (a instanceof io.netty.buffer.ByteBuf buf && buf.refCnt() > 0) {
                buf.release();
            }
        }
    }

    /**
     * On (the default), each send is flushed to the socket at once; off, {@link #send} only queues its command until
     * {@link #flush()}, so a batch goes out in few system calls. Turning it on flushes.
     */
    public void autoFlush(boolean on) {
        autoFlush = on;
        if (on) {
            flush();
        }
    }

    /** Writes every command sent so far to the socket. */
    public void flush() {
        channel.flush();
    }

    /** Commands sent whose futures this connection has not completed yet. */
    public int inFlight() {
        return dispatcher.inFlight();
    }

    public boolean isOpen() {
        return dispatcher.isOpen() && channel.isActive();
    }

    /**
     * Closes the connection; when this returns, every pending future has failed with
     * {@link ConnectionClosedException}. Idempotent.
     */
    @Override
    public void close() {
        Runnable closing = () -> dispatcher.closeWith(new ConnectionClosedException("connection to " + remote
                + " was closed by the client", null));
        EventLoop loop = channel.eventLoop();
        if (loop.inEventLoop()) {
            closing.run();
            return;
        }
        try {
            loop.submit(closing).awaitUninterruptibly();
        } catch (RejectedExecutionException e) {
            channel.close();
        }
    }

    @Override
    public String toString() {
        return "RespConnection[" + remote + (isOpen() ? "" : ", closed") + ", " + inFlight() + " in flight]";
    }
}
