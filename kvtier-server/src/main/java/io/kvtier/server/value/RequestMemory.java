package io.kvtier.server.value;

import io.kvtier.resp.RequestBudget;
import io.kvtier.server.config.ClientLimits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Why: a request's payloads used to reserve store memory before their first byte, without limit, so two slow
 * connections declaring 128 MiB SETs held a 256 MiB tier and every honest writer waited, and a 320 MiB MSET held all
 * of memory while waiting for more. Now the memory reserved for unfinished requests is capped per connection
 * (CONNECTION_RESERVATION_SHARE of --memory) and in total (TOTAL_RESERVATION_SHARE): an honest writer always finds
 * the other half of the tier for its value, which the demoter frees. A payload beyond either cap does not wait: one
 * of at least SPOOL_MAX bytes streams straight to the disk tier (DirectWrite), a smaller one is appended to the
 * request's spool file and read into memory when its command runs; the spool files of all connections together are
 * capped at a quarter of --disk.
 */

/**
 * What the unfinished requests of all connections hold: heap ({@link RequestBudget}), store memory reserved for
 * payloads, and payloads spilled to spool files, each against its cap. Thread-safe (counters only).
 */
public final class RequestMemory {
    private static final Logger log = LoggerFactory.getLogger(RequestMemory.class);
    /** Payloads over the reservation caps from this size on go to the disk tier, smaller ones to a spool file. */
    static final long SPOOL_MAX = 8L << 20; // each streams to a file of its own: few, large ones only
    static final String SPOOL_SUFFIX = ".spool.tmp";
    /** Threads for spool file I/O: two, so one request's reads can overlap another's writes. */
    static final int SPOOL_THREADS = 2;

    private final RequestBudget heap;
    private final long connectionReservationCap;
    private final long totalReservationCap;
    private final long spoolCap;
    private final Path spoolDir;
    private final AtomicLong reserved = new AtomicLong();
    private final AtomicLong spooled = new AtomicLong();
    private final AtomicLong nextSpool = new AtomicLong();
    /** Spool files' writes, reads and deletes: never on an event loop. */
    private final java.util.concurrent.ExecutorService spoolIo;

    public RequestMemory(ClientLimits limits, long memoryBytes, long diskBytes, Path spoolDir) {
        this.heap = new RequestBudget(limits.maxMemoryClients());
        this.connectionReservationCap = (long) (memoryBytes * ClientLimits.CONNECTION_RESERVATION_SHARE);
        this.totalReservationCap = (long) (memoryBytes * ClientLimits.TOTAL_RESERVATION_SHARE);
        this.spoolCap = diskBytes / 4;
        this.spoolDir = spoolDir;
        AtomicLong threads = new AtomicLong();
        this.spoolIo = java.util.concurrent.Executors.newFixedThreadPool(SPOOL_THREADS, r -> {
            Thread t = new Thread(r, "kvtier-spool-io-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** The executor of spool file I/O. */
    java.util.concurrent.Executor spoolIo() {
        return spoolIo;
    }

    /** Stops the spool I/O threads once what is queued has run (the server is stopping). */
    public void close() {
        spoolIo.shutdown();
    }

    /** Deletes spool files a previous process left behind (it stopped while requests were arriving). */
    public static void deleteLeftovers(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> list = Files.list(dir)) {
            for (Path p : list.filter(f -> f.getFileName().toString().endsWith(SPOOL_SUFFIX)).toList()) {
                log.info("deleting {}: a request that was still arriving when the node stopped", p);
                Files.deleteIfExists(p);
            }
        }
    }

    public RequestBudget heap() {
        return heap;
    }

    /** Store memory reserved now for payloads of unfinished requests, all connections. */
    public long reservedBytes() {
        return reserved.get();
    }

    /** Bytes in spool files now, all connections. */
    public long spooledBytes() {
        return spooled.get();
    }

    long connectionReservationCap() {
        return connectionReservationCap;
    }

    /** Counts {@code bytes} of reservation if the total cap allows it. */
    boolean tryReserve(long bytes) {
        return tryAdd(reserved, bytes, totalReservationCap);
    }

    void unreserve(long bytes) {
        reserved.addAndGet(-bytes);
    }

    /** Counts {@code bytes} of spool if the spool cap allows it. */
    boolean trySpool(long bytes) {
        return tryAdd(spooled, bytes, spoolCap);
    }

    void unspool(long bytes) {
        spooled.addAndGet(-bytes);
    }

    long spoolCap() {
        return spoolCap;
    }

    Path newSpoolFile() {
        return spoolDir.resolve("request-" + ProcessHandle.current().pid() + "-" + nextSpool.incrementAndGet()
                + SPOOL_SUFFIX);
    }

    private static boolean tryAdd(AtomicLong counter, long bytes, long cap) {
        while (true) {
            long now = counter.get();
            if (now + bytes > cap) {
                return false;
            }
            if (counter.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }
}
