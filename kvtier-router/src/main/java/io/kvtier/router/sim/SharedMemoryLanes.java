package io.kvtier.router.sim;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.HostPort;
import io.kvtier.client.RespConnection;
import io.kvtier.client.shm.SharedMemoryClient;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/*
 * The engine's chunk bytes through a co-located kvtier node's shared memory (KVC.SHM), as an engine on the node's host
 * would move them with TensorPool: lanes of one connection, one SharedMemoryClient and two chunk buffers each (one a
 * load lands in, one a store sends from, whose body is written once and only its 16-byte header per store), each
 * lane used by one thread at a time. The buffers are off-heap arenas, not direct ByteBuffers, so several engines in one
 * JVM do not run into the direct-memory limit.
 */
/** A co-located engine's loads and stores of chunk values through shared memory: see the essay above. */
final class SharedMemoryLanes implements AutoCloseable {
    private record Lane(RespConnection connection, SharedMemoryClient client, ByteBuffer in, ByteBuffer out) {
    }

    private final ClientResources resources = ClientResources.create(1);
    private final Arena arena = Arena.ofShared();
    private final BlockingQueue<Lane> lanes;
    private final ExecutorService threads;
    private final int chunkBytes;

    /**
     * @param body the bytes every stored value carries after its 16-byte header (chunkBytes - 16 of them)
     * @throws IOException when the node cannot be reached, or its memory cannot be mapped from this process
     */
    SharedMemoryLanes(HostPort node, int lanes, int chunkBytes, byte[] body, Duration timeout) throws IOException {
        this.chunkBytes = chunkBytes;
        this.lanes = new ArrayBlockingQueue<>(lanes);
        this.threads = Executors.newFixedThreadPool(lanes, Thread.ofPlatform().daemon().name("kvtier-engine-shm-", 0)
                .factory());
        try {
            for (int i = 0; i < lanes; i++) {
                RespConnection c = RespConnection.connect(resources, node.host(), node.port(),
                        new ClientOptions(timeout, timeout)).get();
                SharedMemoryClient client = SharedMemoryClient.open(c, timeout.toMillis());
                if (!client.local()) {
                    client.close();
                    c.close();
                    throw new IOException("kvtier at " + node + " offers no shared memory this process can map "
                            + "(start it with --shm yes, on this host, as this user)");
                }
                ByteBuffer out = arena.allocate(chunkBytes).asByteBuffer();
                out.position(16);
                out.put(body, 0, chunkBytes - 16);
                this.lanes.add(new Lane(c, client, arena.allocate(chunkBytes).asByteBuffer(), out.clear()));
            }
        } catch (IOException e) {
            close();
            throw e;
        } catch (Exception e) {
            close();
            throw new IOException("could not open shared-memory lanes to kvtier at " + node + ": " + e, e);
        }
    }

    /** Loads {@code key}: true when a value of chunkBytes came whose header is (hash, worker); the bytes counted. */
    CompletableFuture<Boolean> load(byte[] key, long hash, int worker, java.util.function.LongConsumer read) {
        return CompletableFuture.supplyAsync(() -> {
            Lane lane = take();
            try {
                ByteBuffer in = lane.in().clear();
                long n = lane.client().load(key, in);
                if (n < 0) {
                    return false;
                }
                read.accept(n);
                return n == chunkBytes && in.getLong(0) == hash && in.getLong(8) == worker;
            } catch (IOException | RuntimeException e) {
                return false;
            } finally {
                lanes.add(lane);
            }
        }, threads);
    }

    /** Stores the chunk value of (hash, worker) under {@code key}, as SET does. */
    CompletableFuture<Boolean> store(byte[] key, long hash, int worker) {
        return CompletableFuture.supplyAsync(() -> {
            Lane lane = take();
            try {
                ByteBuffer out = lane.out().clear();
                out.putLong(0, hash).putLong(8, worker);
                lane.client().save(key, out);
                return true;
            } catch (IOException | RuntimeException e) {
                return false;
            } finally {
                lanes.add(lane);
            }
        }, threads);
    }

    private Lane take() {
        try {
            return lanes.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    @Override
    public void close() {
        threads.shutdownNow();
        for (Lane lane : lanes) {
            lane.client().close();
            lane.connection().close();
        }
        resources.close();
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
