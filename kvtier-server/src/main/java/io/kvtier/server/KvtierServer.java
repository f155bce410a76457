package io.kvtier.server;

import io.kvtier.kvcache.KvCache;
import io.kvtier.server.command.CommandTable;
import io.kvtier.server.metrics.Metrics;
import io.kvtier.server.metrics.MetricsEndpoint;
import io.kvtier.server.net.ConnectionHandler;
import io.kvtier.server.net.DiskReads;
import io.kvtier.store.TieredStore;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running node: the store, the RESP listener(s), the disk-read pool and the metrics endpoint. {@link #start}
 * recovers the store and binds; {@link #close} stops accepting, closes clients, writes memory to disk and forces it.
 */
public final class KvtierServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KvtierServer.class);

    private final ServerOptions options;
    private final TieredStore store;
    private final DiskReads diskReads;
    private final KvCache kvcache;
    private final Metrics metrics;
    private final ServerContext context;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final List<Channel> listeners = new ArrayList<>();
    private io.kvtier.server.cluster.ClusterNode cluster;
    private boolean closed;

    private KvtierServer(ServerOptions options) throws IOException {
        this.options = options;
        this.kvcache = new KvCache();
        io.kvtier.server.net.RequestMemory.deleteLeftovers(options.dir());
        io.kvtier.server.command.Watches watches = new io.kvtier.server.command.Watches();
        this.store = TieredStore.open(options.storeOptions(), io.kvtier.store.KeyListener.both(kvcache, watches));
        kvcache.attach(store, options.cluster() == null); // a chunk's two halves share one store only on one node
        this.diskReads = new DiskReads(store, options.diskThreads(), options.diskReadBufferBytes());
        this.metrics = new Metrics();
        metrics.bind(store);
        metrics.bind(kvcache);
        this.context = new ServerContext(options, store, kvcache, diskReads, new CommandTable(), metrics,
                watches);
        IoHandlerFactory io = Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.boss = new MultiThreadIoEventLoopGroup(1, io);
        this.workers = new MultiThreadIoEventLoopGroup(options.ioThreads(), io);
        // On the accepting thread, not a worker: a few counter sums every 100 ms, stopped with the group.
        boss.next().scheduleAtFixedRate(context::sampleRates, InstantaneousRates.PERIOD_MILLIS,
                InstantaneousRates.PERIOD_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Opens the store (recovering it) and starts listening. */
    public static KvtierServer start(ServerOptions options) throws IOException, InterruptedException {
        KvtierServer server = new KvtierServer(options);
        try {
            server.bind();
        } catch (IOException | InterruptedException | RuntimeException e) {
            server.close();
            throw e;
        }
        return server;
    }

    private void bind() throws IOException, InterruptedException {
        String[] hosts = options.bind().trim().split("\\s+");
        ClientLimit limit = ClientLimit.compute(options, hosts.length,
                options.metricsPort() > 0 ? MetricsEndpoint.MAX_CONNECTIONS : 0);
        context.maxClients(limit.effective());
        if (limit.reduced()) {
            log.warn("the open-file limit {} leaves room for {} clients ({} descriptors kept for the node itself): "
                    + "--max-clients {} lowered to {}; raise it with ulimit -n {}", limit.fdLimit(), limit.effective(),
                    limit.reserved(), limit.configured(), limit.effective(), limit.reserved() + limit.configured());
        }
        Class<? extends ServerSocketChannel> channelType = Epoll.isAvailable() ? EpollServerSocketChannel.class
                : NioServerSocketChannel.class;
        ServerBootstrap bootstrap = new ServerBootstrap().group(boss, workers).channel(channelType)
                .option(ChannelOption.SO_BACKLOG, 511)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new ConnectionHandler(context));
                    }
                });
        for (String host : hosts) {
            try {
                Channel ch = bootstrap.bind(new InetSocketAddress(host, options.port())).sync().channel();
                listeners.add(ch);
                context.port(((InetSocketAddress) ch.localAddress()).getPort());
            } catch (Exception e) {
                throw new IOException("cannot listen on " + host + ":" + options.port() + ": " + e.getMessage(), e);
            }
        }
        if (options.cluster() != null) {
            joinCluster();
        }
        if (options.metricsPort() > 0) {
            metrics.serve(hosts[0], options.metricsPort(), options.requirePass());
        }
        log.info("kvtier listening on {}:{} ({}), memory {} MiB, disk {} MiB, max clients {} (open-file limit {}), "
                + "data in {}{}", options.bind(), context.port(), Epoll.isAvailable() ? "epoll" : "nio",
                options.memoryBytes() >> 20, options.diskBytes() >> 20, limit.effective(), limit.fdLimit(),
                options.dir().toAbsolutePath(),
                options.metricsPort() > 0 ? ", metrics on :" + options.metricsPort() + "/metrics" : "");
    }

    /**
     * Joins the cluster once the RESP port is known (it is advertised to the other members), then waits for the
     * first slot table; keyed commands answer -CLUSTERDOWN until it arrives.
     */
    private void joinCluster() throws IOException, InterruptedException {
        ClusterSettings c = options.cluster();
        String endpoint = c.membership().endpoint();
        if (endpoint.isEmpty()) {
            String host = options.bind().trim().split("\\s+")[0];
            if (host.equals("0.0.0.0") || host.equals("::")) {
                throw new IOException("--bind " + host + " does not say how other nodes reach this one: set --announce"
                        + " host:port");
            }
            endpoint = (host.contains(":") ? "[" + host + "]" : host) + ":" + context.port();
        }
        cluster = io.kvtier.server.cluster.ClusterNode.create(new ClusterSettings(c.membership().withEndpoint(endpoint),
                c.replicas(), c.syncReplication(), c.peerTimeout(), c.proxy(), c.rebalanceBytesPerSecond()), store,
                options.requirePass());
        context.cluster(cluster); // before joining: peers may forward to this node as soon as it is in their table
        metrics.bind(cluster);
        cluster.join();
        if (!cluster.awaitServing(10_000)) {
            log.warn("no slot table 10 s after joining; serving keys once one arrives");
        }
    }

    /** The port actually bound (useful with port 0). */
    public int port() {
        return context.port();
    }

    public ServerContext context() {
        return context;
    }

    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        log.info("shutting down: closing {} clients", context.sessions().size());
        for (Channel ch : listeners) {
            if (!ch.close().awaitUninterruptibly(LOOP_STOP_SECONDS, TimeUnit.SECONDS)) {
                log.warn("listener {} did not close within {} s; going on", ch.localAddress(), LOOP_STOP_SECONDS);
            }
        }
        if (cluster != null) {
            cluster.close(); // leave first: the others take over this node's slots while it shuts down
        }
        // Bounded: an event loop that died or hangs must not keep the process from writing memory to disk.
        stopLoops("client", workers);
        stopLoops("accept", boss);
        context.scripting().close();
        metrics.close();
        try {
            diskReads.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            store.close(); // a ShutdownLossException (values lost) goes up to the launcher, which exits non-zero
        } finally {
            kvcache.close();
        }
        log.info("shutdown complete");
    }

    /** Most seconds the shutdown waits for a listener or an event-loop group before going on without it. */
    private static final int LOOP_STOP_SECONDS = 10;

    private static void stopLoops(String name, EventLoopGroup group) {
        if (!group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(LOOP_STOP_SECONDS,
                TimeUnit.SECONDS)) {
            log.warn("{} event loops did not stop within {} s; going on with the shutdown", name, LOOP_STOP_SECONDS);
        }
    }
}
