package io.kvtier.server;

import io.kvtier.cluster.node.ClusterSettings;
import io.kvtier.kvcache.KvCache;
import io.kvtier.server.events.StoreEventLog;
import io.kvtier.server.command.CommandTable;
import io.kvtier.server.command.ServerContext;
import io.kvtier.server.config.ClientLimit;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.server.metrics.InstantaneousRates;
import io.kvtier.server.metrics.Metrics;
import io.kvtier.server.metrics.MetricsEndpoint;
import io.kvtier.server.net.ConnectionHandler;
import io.kvtier.server.net.TlsWriteSlicer;
import io.kvtier.server.tls.TlsContexts;
import io.kvtier.server.value.DiskReads;
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
import io.netty.handler.stream.ChunkedWriteHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running node: the store, the RESP listener(s), plain and TLS, the disk-read pool and the metrics endpoint.
 * {@link #start} recovers the store and binds; {@link #close} stops accepting, closes clients, writes memory to disk
 * and forces it.
 */
public final class KvtierServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KvtierServer.class);

    private final ServerOptions options;
    private final TieredStore store;
    private final DiskReads diskReads;
    private final KvCache kvcache;
    private final StoreEventLog storeEvents;
    private final Metrics metrics;
    private final ServerContext context;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final List<Channel> listeners = new ArrayList<>();
    /** Null without --tls-port. */
    private final TlsContexts tls;
    private int tlsPort;
    private io.kvtier.cluster.node.ClusterNode cluster;
    private boolean closed;

    private KvtierServer(ServerOptions options) throws IOException {
        this.options = options;
        this.tls = options.tls() == null ? null : TlsContexts.load(options.tls()); // bad files: before recovery
        this.kvcache = new KvCache();
        io.kvtier.server.value.RequestMemory.deleteLeftovers(options.dir());
        io.kvtier.server.command.Watches watches = new io.kvtier.server.command.Watches();
        this.storeEvents = options.kvEventsPort() > 0 ? new StoreEventLog() : null;
        io.kvtier.store.KeyListener listener = io.kvtier.store.KeyListener.both(kvcache, watches);
        this.store = TieredStore.open(options.storeOptions(), storeEvents == null ? listener
                : io.kvtier.store.KeyListener.both(listener, storeEvents));
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
        int listenersPerHost = (options.plainListener() ? 1 : 0) + (tls != null ? 1 : 0);
        ClientLimit limit = ClientLimit.compute(options, hosts.length * listenersPerHost,
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
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(1 << 20, 4 << 20));
        if (options.plainListener()) {
            ServerBootstrap plain = bootstrap.clone().childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new ConnectionHandler(context));
                }
            });
            for (String host : hosts) {
                context.port(listen(plain, host, options.port()));
            }
        }
        if (tls != null) {
            // Decrypted bytes come out of the SslHandler's buffers, so payload reads cannot land in a value's pages;
            // large replies are encrypted a slice at a time as the socket takes them (TlsWriteSlicer).
            ServerBootstrap secure = bootstrap.clone().childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(tls.server().newHandler(ch.alloc()), new ChunkedWriteHandler(),
                            TlsWriteSlicer.INSTANCE, new ConnectionHandler(context, ConnectionHandler.Transport.TLS));
                }
            });
            for (String host : hosts) {
                tlsPort = listen(secure, host, options.tls().port());
            }
        }
        if (options.cluster() != null) {
            joinCluster();
        }
        if (options.metricsPort() > 0) {
            metrics.serve(hosts[0], options.metricsPort(), options.requirePass());
        }
        if (storeEvents != null) {
            String node = options.cluster() != null ? options.cluster().membership().nodeId()
                    : hosts[0] + ":" + (options.plainListener() ? context.port() : tlsPort);
            storeEvents.start(store, node, hosts[0], options.kvEventsPort(), options.requirePass());
            context.storeEvents(storeEvents);
        }
        log.info("kvtier listening on {}:{}{} ({}), memory {} MiB, disk {} MiB, max clients {} (open-file limit {}), "
                + "data in {}{}", options.bind(), options.plainListener() ? context.port() : "-",
                tls != null ? ", TLS on :" + tlsPort : "", Epoll.isAvailable() ? "epoll" : "nio",
                options.memoryBytes() >> 20, options.diskBytes() >> 20, limit.effective(), limit.fdLimit(),
                options.dir().toAbsolutePath(),
                options.metricsPort() > 0 ? ", metrics on :" + options.metricsPort() + "/metrics" : "");
    }

    /** Binds {@code bootstrap} on {@code host}:{@code port}; returns the port bound (port 0 picks one). */
    private int listen(ServerBootstrap bootstrap, String host, int port) throws IOException, InterruptedException {
        try {
            Channel ch = bootstrap.bind(new InetSocketAddress(host, port)).sync().channel();
            listeners.add(ch);
            return ((InetSocketAddress) ch.localAddress()).getPort();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
        }
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
            // With --tls-cluster, peers and cluster clients are sent to the TLS port, as Redis announces it.
            int reachedAt = tls != null && options.tls().cluster() ? tlsPort : context.port();
            endpoint = (host.contains(":") ? "[" + host + "]" : host) + ":" + reachedAt;
        }
        cluster = io.kvtier.cluster.node.ClusterNode.create(new ClusterSettings(c.membership().withEndpoint(endpoint),
                c.replicas(), c.syncReplication(), c.peerTimeout(), c.proxy(), c.rebalanceBytesPerSecond(),
                c.serveLostCopies()), store,
                options.requirePass(), tls != null && options.tls().cluster() ? tls::peer : null);
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

    /** The TLS port, 0 without TLS. */
    public int tlsPort() {
        return tlsPort;
    }

    /**
     * Reads the TLS certificate, key and CA files again (SIGHUP): connections accepted or opened from now on use them,
     * open ones keep theirs. Does nothing without TLS.
     *
     * @throws IOException when a file is missing or unusable; the certificates in use stay
     */
    public void reloadTls() throws IOException {
        if (tls != null) {
            tls.reload();
        }
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
        stopServing();
        try {
            store.close(); // a ShutdownLossException (values lost) goes up to the launcher, which exits non-zero
            if (cluster != null) {
                cluster.stoppedCleanly(); // its copies are whole on disk: a restart may serve them again
            }
        } finally {
            kvcache.close();
        }
        log.info("shutdown complete");
    }

    /**
     * Stops as kill -9 would, for in-JVM fault tests (a MiniCluster's kill): connections are cut, the cluster is not
     * told (no leave: the caller cut this node's links first, see {@code LinkFilter}), and memory is not written to
     * disk, so only what the disk tier had written survives a restart. Idempotent.
     */
    public synchronized void crash() {
        if (closed) {
            return;
        }
        closed = true;
        for (Channel ch : listeners) {
            ch.close().awaitUninterruptibly(LOOP_STOP_SECONDS, TimeUnit.SECONDS);
        }
        if (cluster != null) {
            cluster.crash();
        }
        stopServing();
        store.crash();
        kvcache.close();
        log.warn("crashed (a fault test)");
    }

    /**
     * Stops what serves clients and reads the store: event loops (bounded: one that died or hangs must not keep the
     * process from writing memory to disk), scripts, metrics, store events, disk reads. The store itself stays open.
     */
    private void stopServing() {
        stopLoops("client", workers);
        stopLoops("accept", boss);
        context.scripting().close();
        metrics.close();
        if (storeEvents != null) {
            storeEvents.close();
        }
        try {
            context.closePrefetcher();
            context.closeSharedLeases();
            diskReads.close();
            context.requestMemory().close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
