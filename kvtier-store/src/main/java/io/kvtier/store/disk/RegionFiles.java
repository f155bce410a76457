package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The region files of a data directory, as found at start-up: listed in id order, checked for their format version,
 * and weighed against the room the filesystem leaves. Stateless.
 */
public final class RegionFiles {
    /** The region size for a directory whose budget is {@code budget}: 1/16 of it, between 1 MiB and 64 MiB. */
    public static long regionBytesFor(long budget) {
        return Math.max(1L << 20, Math.min(64L << 20, budget / 16));
    }

    private static final Logger log = LoggerFactory.getLogger(RegionFiles.class);
    /** What the start-up check leaves of the filesystem's room (free space plus what the tier already holds). */
    static final double FREE_SPACE_SHARE = 0.9;

    private RegionFiles() {
    }

    /**
     * The disk budget to use in {@code dir}: {@code requested}, or less if the filesystem cannot hold it, namely
     * 90% of its usable space plus what region files there already take. Logs a WARN naming both figures when it
     * clamps. Call before {@link DiskTier#open}, to size regions from the result.
     */
    public static long budgetFor(Path dir, long requested) throws IOException {
        Files.createDirectories(dir);
        long usable = Files.getFileStore(dir).getUsableSpace();
        long room = (long) ((usable + regionBytesIn(dir)) * FREE_SPACE_SHARE);
        if (requested <= room) {
            return requested;
        }
        log.warn("--disk {} bytes is more than the filesystem of {} can hold: {} bytes free plus {} bytes of "
                + "regions; using {} bytes ({}% of that)", requested, dir.toAbsolutePath(), usable,
                regionBytesIn(dir), room, Math.round(FREE_SPACE_SHARE * 100));
        return room;
    }

    private static long regionBytesIn(Path dir) throws IOException {
        long total = 0;
        for (Path p : list(dir)) {
            total += Files.size(p);
        }
        return total;
    }

    /** How many region files {@code dir} holds (0 if it does not exist): the descriptors a store there keeps open. */
    public static int count(Path dir) throws IOException {
        return Files.isDirectory(dir) ? list(dir).size() : 0;
    }

    static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return list.filter(p -> {
                String n = p.getFileName().toString();
                return n.startsWith(Region.PREFIX) && n.endsWith(Region.SUFFIX);
            }).sorted((a, b) -> Long.compareUnsigned(Region.idOf(a), Region.idOf(b))).toList();
        }
    }

    /**
     * The record layout of a region file written earlier: that of its first intact header (version 2 or 3) in its
     * first 8 MiB, version 3 if there is none (an empty file, or damage). Refuses a region of format version 1 rather
     * than read it as damage.
     */
    static RecordFormat.Layout layoutOf(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate((int) Math.min(ch.size(), 8 << 20)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            RecordFormat.readFully(ch, b, 0);
            b.flip();
            if (b.limit() >= 4 && b.getInt(0) == RecordFormat.MAGIC_V1) {
                throw new IOException("data directory " + file.getParent().toAbsolutePath() + " holds region files "
                        + "of record format version 1 (" + file.getFileName() + "); this kvtier reads versions 2 and "
                        + "3 only: start it with an empty --dir, or move that directory aside");
            }
            for (int i = 0; i + 4 <= b.limit(); i++) {
                RecordFormat.Layout layout = RecordFormat.Layout.ofMagic(b.getInt(i));
                if (layout != null && RecordFormat.intactHeaderAt(b, i, layout)) {
                    if (i > 0) {
                        log.warn("region {} does not start with an intact record; read as format {} (the first intact"
                                + " header, at offset {})", file.getFileName(), layout, i);
                    }
                    return layout;
                }
            }
            return RecordFormat.Layout.V3;
        }
    }
}
