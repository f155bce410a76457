package io.kvtier.server;

import io.kvtier.kvcache.KvCache;
import io.kvtier.server.command.CommandTable;
import io.kvtier.server.command.ServerContext;
import io.kvtier.server.config.ClientLimits;
import io.kvtier.server.config.ServerOptions;
import io.kvtier.server.metrics.Metrics;
import io.kvtier.server.value.DiskReads;
import io.kvtier.store.TieredStore;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A node's shared state without its listeners, as {@link KvtierServer} builds it: a real {@link TieredStore} in
 * {@code dir}, its KV-cache layer, disk reads, command table and metrics, for handler-level tests. Closes them all.
 */
public final class TestNode implements AutoCloseable {
    public final ServerContext context;
    private final TieredStore store;
    private final KvCache kvcache;
    private final DiskReads diskReads;
    private final Metrics metrics;

    private TestNode(ServerOptions options) throws IOException {
        kvcache = new KvCache();
        io.kvtier.server.command.Watches watches = new io.kvtier.server.command.Watches();
        store = TieredStore.open(options.storeOptions(), io.kvtier.store.KeyListener.both(kvcache, watches));
        kvcache.attach(store, true);
        diskReads = new DiskReads(store, 2, 8L << 20);
        metrics = new Metrics();
        context = new ServerContext(options, store, kvcache, diskReads, new CommandTable(), metrics, watches);
    }

    /** 4 MiB of memory, 32 MiB of disk, values up to 2 MiB; {@code password} may be null. */
    public static TestNode open(Path dir, String password, int maxClients) throws IOException {
        return new TestNode(options(dir, password, maxClients));
    }

    /** The options {@link #open} uses, for a real {@link KvtierServer} on a free port. */
    public static ServerOptions options(Path dir, String password, int maxClients) {
        return new ServerOptions("127.0.0.1", 0, dir, 4L << 20, 32L << 20, 2L << 20, password, true, 0, maxClients,
                2, 1, 8L << 20, ServerOptions.DEFAULT_PIN_SHARE, 0, null, ClientLimits.defaults(), null,
                0);
    }

    @Override
    public void close() throws Exception {
        metrics.close();
        diskReads.close();
        store.close();
        kvcache.close();
    }
}
