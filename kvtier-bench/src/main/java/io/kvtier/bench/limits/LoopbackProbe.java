package io.kvtier.bench.limits;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Loopback TCP throughput: N client streams write 4 MiB direct buffers to as many server-side readers on 127.0.0.1,
 * which drain into direct buffers and count bytes. The rate is taken between two snapshots of the received count
 * after a warm-up, so connection set-up and TCP window growth are not measured. One probe per measurement; the
 * probe owns its channels and threads and releases them on {@link #close()}.
 */
final class LoopbackProbe implements AutoCloseable {
    static final int BUFFER_BYTES = 4 << 20;

    private final ServerSocketChannel server;
    private final List<SocketChannel> channels = new ArrayList<>();
    private final List<Future<?>> tasks = new ArrayList<>();
    private final ExecutorService threads;
    private final AtomicLong received = new AtomicLong();
    private volatile boolean stopping;

    private LoopbackProbe(int streams) throws IOException {
        threads = Executors.newFixedThreadPool(2 * streams, Thread.ofPlatform().daemon().name("limits-tcp-", 0)
                .factory());
        server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
    }

    /** Bytes per second received over {@code measure}, after {@code warmUp} of the same traffic. */
    static long bytesPerSecond(int streams, Duration warmUp, Duration measure) throws IOException,
            InterruptedException {
        try (LoopbackProbe probe = new LoopbackProbe(streams)) {
            for (int i = 0; i < streams; i++) {
                probe.connect();
            }
            Thread.sleep(warmUp);
            long before = probe.received.get();
            long start = System.nanoTime();
            Thread.sleep(measure);
            long bytes = probe.received.get() - before;
            long nanos = System.nanoTime() - start;
            probe.checkHealthy();
            return Math.round(bytes * 1e9 / nanos);
        }
    }

    private void connect() throws IOException {
        SocketChannel client = SocketChannel.open(server.getLocalAddress());
        channels.add(client);
        SocketChannel accepted = server.accept();
        channels.add(accepted);
        tasks.add(threads.submit(() -> drain(accepted)));
        tasks.add(threads.submit(() -> fill(client)));
    }

    private Void fill(SocketChannel client) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
        while (!stopping) {
            buffer.clear();
            while (buffer.hasRemaining() && !stopping) {
                client.write(buffer);
            }
        }
        return null;
    }

    private Void drain(SocketChannel accepted) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
        int n;
        while ((n = accepted.read(buffer.clear())) >= 0) {
            received.addAndGet(n);
        }
        return null;
    }

    /** A writer or reader that died before the measurement ended would make the figure meaningless. */
    private void checkHealthy() throws IOException {
        for (Future<?> task : tasks) {
            if (task.isDone()) {
                try {
                    task.get();
                    throw new IOException("a loopback stream ended before the measurement did");
                } catch (ExecutionException e) {
                    throw new IOException("loopback stream failed: " + e.getCause(), e.getCause());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while checking loopback streams", e);
                }
            }
        }
    }

    /**
     * Stops the writers and closes every channel. The streams then fail with closed-channel errors, which are the
     * expected way for them to end and are not reported.
     */
    @Override
    public void close() throws IOException {
        stopping = true;
        IOException failure = null;
        for (SocketChannel channel : channels) {
            try {
                channel.close();
            } catch (IOException e) {
                failure = e;
            }
        }
        threads.close();
        server.close();
        if (failure != null) {
            throw failure;
        }
    }
}
