package io.kvtier.client;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The I/O threads that many {@link RespConnection}s share: epoll when the native transport loads, NIO otherwise.
 * Create one per process (or per benchmark run) and close it after every connection on it; thread-safe.
 */
public final class ClientResources implements AutoCloseable {
    private final EventLoopGroup group;
    private final Class<? extends SocketChannel> channelType;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ClientResources(EventLoopGroup group, Class<? extends SocketChannel> channelType) {
        this.group = group;
        this.channelType = channelType;
    }

    /**
     * Starts {@code ioThreads} I/O threads (daemons named {@code kvtier-client-io-*}); 0 means Netty's default, twice
     * the number of cores.
     */
    public static ClientResources create(int ioThreads) {
        if (ioThreads < 0) {
            throw new IllegalArgumentException("ioThreads " + ioThreads + " is negative (0 means Netty's default)");
        }
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        DefaultThreadFactory threads = new DefaultThreadFactory("kvtier-client-io", true);
        return new ClientResources(new MultiThreadIoEventLoopGroup(ioThreads, threads, io),
                epoll ? EpollSocketChannel.class : NioSocketChannel.class);
    }

    public EventLoopGroup group() {
        return group;
    }

    Class<? extends SocketChannel> channelType() {
        return channelType;
    }

    /**
     * Closes every connection still open on these threads (failing their pending commands) and waits for the threads
     * to stop. Idempotent; must not be called from one of these I/O threads.
     */
    @Override
    public void close() {
        for (EventExecutor loop : group) {
            if (loop.inEventLoop()) {
                throw new IllegalStateException("ClientResources.close() on its own I/O thread would wait for itself");
            }
        }
        if (closed.compareAndSet(false, true)) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        }
    }
}
