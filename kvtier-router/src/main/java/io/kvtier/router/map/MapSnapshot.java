package io.kvtier.router.map;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/*
 * The router's map on disk, so that a restarted router knows blocks older than the engines' replay buffers.
 *
 * One file: "KVTMAP1", the engine count, per engine its id, model, the seq and payload digest of the last batch its
 * entries reflect, its block size, the groups whose stores were taken, its hash-only units per medium, and per medium
 * the pairs (engine block hash, prefix hash); then a CRC32C of everything before. Written to a temporary file, forced
 * to disk and renamed over the old one: a crash leaves the old file or the new, never a part. A file that does not
 * read back whole (truncated, a bad checksum, another format) is refused as a whole: the router starts empty and
 * says why, as it would without one.
 *
 * Entries are trusted only as far as the engine confirms them: the subscriber resumes after the saved seq only where
 * the engine's replay buffer still holds that very batch (same digest); otherwise they are dropped (EventSubscriber).
 */

/** An engine's map entries as saved, and the file they are kept in. */
public record MapSnapshot(String engine, String model, long seq, long digest, int blockSize, long[] groups,
        Map<String, Integer> hashOnlyBlockSizes, Map<String, long[]> media) {
    private static final byte[] MAGIC = "KVTMAP1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** Blocks held, over all media. */
    public long blocks() {
        return media.values().stream().mapToLong(pairs -> pairs.length / 2).sum();
    }

    /** Writes {@code engines} to {@code file}, atomically and durably. */
    public static void write(Path file, List<MapSnapshot> engines) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.write(MAGIC);
            out.writeInt(engines.size());
            for (MapSnapshot e : engines) {
                out.writeUTF(e.engine);
                out.writeUTF(e.model);
                out.writeLong(e.seq);
                out.writeLong(e.digest);
                out.writeInt(e.blockSize);
                out.writeInt(e.groups.length);
                for (long g : e.groups) {
                    out.writeLong(g);
                }
                out.writeInt(e.hashOnlyBlockSizes.size());
                for (Map.Entry<String, Integer> u : e.hashOnlyBlockSizes.entrySet()) {
                    out.writeUTF(u.getKey());
                    out.writeInt(u.getValue());
                }
                out.writeInt(e.media.size());
                for (Map.Entry<String, long[]> m : e.media.entrySet()) {
                    out.writeUTF(m.getKey());
                    out.writeInt(m.getValue().length / 2);
                    for (long v : m.getValue()) {
                        out.writeLong(v);
                    }
                }
            }
        }
        byte[] body = bytes.toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(body);
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            java.nio.ByteBuffer[] b = {java.nio.ByteBuffer.wrap(body),
                java.nio.ByteBuffer.allocate(Long.BYTES).putLong(0, crc.getValue())};
            while (b[1].hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true); // the rename itself
        } catch (IOException ignored) {
            // a file system that cannot sync a directory: the rename is still atomic
        }
    }

    /** The engines saved in {@code file}, by id; empty if there is none; an IOException says why it was refused. */
    public static Map<String, MapSnapshot> read(Path file) throws IOException {
        if (!Files.exists(file)) {
            return Map.of();
        }
        byte[] all = Files.readAllBytes(file);
        if (all.length < MAGIC.length + 12 || !java.util.Arrays.equals(all, 0, MAGIC.length, MAGIC, 0,
                MAGIC.length)) {
            throw new IOException(file + " is not a kvtier router map (no KVTMAP1 header)");
        }
        CRC32C crc = new CRC32C();
        crc.update(all, 0, all.length - 8);
        long stored = java.nio.ByteBuffer.wrap(all, all.length - 8, 8).getLong();
        if (crc.getValue() != stored) {
            throw new IOException(file + " fails its checksum (truncated or corrupt)");
        }
        Map<String, MapSnapshot> out = new LinkedHashMap<>();
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(all, MAGIC.length,
                all.length - 8 - MAGIC.length))) {
            int n = count(in, all.length);
            for (int i = 0; i < n; i++) {
                String engine = in.readUTF();
                String model = in.readUTF();
                long seq = in.readLong();
                long digest = in.readLong();
                int blockSize = in.readInt();
                long[] groups = new long[count(in, all.length / 8)];
                for (int g = 0; g < groups.length; g++) {
                    groups[g] = in.readLong();
                }
                Map<String, Integer> units = new TreeMap<>();
                int u = count(in, all.length);
                for (int k = 0; k < u; k++) {
                    units.put(in.readUTF(), in.readInt());
                }
                Map<String, long[]> media = new TreeMap<>();
                int m = count(in, all.length);
                for (int k = 0; k < m; k++) {
                    String medium = in.readUTF();
                    long[] pairs = new long[2 * count(in, all.length / 16)];
                    for (int p = 0; p < pairs.length; p++) {
                        pairs[p] = in.readLong();
                    }
                    media.put(medium, pairs);
                }
                out.put(engine, new MapSnapshot(engine, model, seq, digest, blockSize, groups, units, media));
            }
            if (in.available() != 0) {
                throw new IOException(file + " has bytes after its last engine");
            }
        } catch (java.io.EOFException e) {
            throw new IOException(file + " ends inside an engine", e);
        }
        return out;
    }

    private static int count(DataInputStream in, int most) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > most) {
            throw new IOException("a count of " + n + " where at most " + most + " fit");
        }
        return n;
    }
}
