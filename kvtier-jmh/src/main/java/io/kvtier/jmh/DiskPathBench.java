package io.kvtier.jmh;

import io.kvtier.store.disk.DiskLocation;
import io.kvtier.store.disk.DiskTier;
import io.kvtier.store.disk.PendingRecord;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The disk tier's own path, with no network and no client: what {@code bench/disk-vs-fio.py} sets beside fio's
 * sequential write and random read at the same block size and depth. Not a JMH benchmark (a run is one pass over a
 * fixed amount, timed to the last byte on stable storage), but it ships in benchmarks.jar with them.
 *
 * <ol>
 *   <li>write: {@code --gib} GiB of {@code --value-mib} MiB records appended by the writer thread as the demoter
 *       appends them (one record at a time, a flush after each 16 MiB, its batch size), then forced to stable storage; the time includes
 *       the force, so the page cache cannot flatter it;</li>
 *   <li>read: every record once, in random order, by {@code --depth} threads, each read verified (checksum, key) as
 *       a GET from disk is, into buffers of the size {@link DiskTier#readLength} asks.</li>
 * </ol>
 *
 * <pre>{@code
 * java -cp kvtier-jmh/target/benchmarks.jar io.kvtier.jmh.DiskPathBench DIR [GIB] [VALUE_MIB] [DEPTH]
 * }</pre>
 * Prints one line per phase: GB/s, and for reads p50/p99 per record in ms. The directory is emptied first and after.
 */
public final class DiskPathBench {
    private DiskPathBench() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int gib = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int valueMib = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int depth = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        int size = valueMib << 20;
        int n = (int) (((long) gib << 30) / size);
        clear(dir);
        List<DiskLocation> locations = new ArrayList<>();
        long regionSize = 64L << 20;
        try (DiskTier tier = DiskTier.open(dir, (long) gib * 2 << 30, regionSize, r -> { }, r -> { }, s -> { })) {
            ByteBuffer value = ByteBuffer.allocateDirect(size);
            new Random(1).ints(size / 4).forEach(value::putInt);
            value.flip();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                value.putInt(0, i); // each record its own bytes, so its checksum is computed anew
                locations.add(tier.append(PendingRecord.value(key(i), i + 1, 0, new ByteBuffer[] {value.duplicate()},
                        size, 0)));
                if ((long) (i + 1) * size % io.kvtier.store.TieringRules.DEMOTION_BATCH_BYTES < size) {
                    tier.flush();
                }
            }
            tier.force();
            double writeSeconds = (System.nanoTime() - t0) / 1e9;
            System.out.printf("disk tier write: %d x %d MiB appended and forced: %.2f GB/s%n", n, valueMib,
                    (double) n * size / writeSeconds / 1e9);

            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                order.add(i);
            }
            Collections.shuffle(order, new Random(2));
            ExecutorService pool = Executors.newFixedThreadPool(depth);
            long[] nanos = new long[n];
            long t1 = System.nanoTime();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < depth; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    ByteBuffer dst = ByteBuffer.allocateDirect(DiskTier.readLength(locations.getFirst()));
                    for (int j = first; j < n; j += depth) {
                        int i = order.get(j);
                        long s = System.nanoTime();
                        ByteBuffer got = tier.read(locations.get(i), key(i), dst.clear());
                        nanos[j] = System.nanoTime() - s;
                        if (got.remaining() != size || got.getInt(got.position()) != i) {
                            throw new IllegalStateException("record " + i + " read back wrong");
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            double readSeconds = (System.nanoTime() - t1) / 1e9;
            pool.shutdown();
            Arrays.sort(nanos);
            System.out.printf("disk tier read: %d x %d MiB, random order, %d threads, %s: %.2f GB/s, p50 %.1f ms, "
                            + "p99 %.1f ms%n", n, valueMib, depth, tier.directIo() ? "O_DIRECT" : "page cache",
                    (double) n * size / readSeconds / 1e9, nanos[n / 2] / 1e6, nanos[(int) (n * 0.99)] / 1e6);
        } finally {
            clear(dir);
        }
    }

    private static byte[] key(int i) {
        return ("disk-path-" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static void clear(Path dir) throws java.io.IOException {
        if (Files.exists(dir)) {
            try (var files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
