package io.kvtier.cluster.node;

import io.kvtier.client.cluster.SlotHash;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a node keeps of its part in the cluster across restarts, next to its data: per slot, the stamp of the newest
 * epoch at which its copy was complete (see {@link ClusterNode}: the epoch in the high bits, flags below), and whether
 * the node stopped cleanly. A clean stop (every memory value written to disk, held writes settled or their slots
 * marked) writes it with the clean flag; a node that starts marks it unclean at once, so that a crash, a kill -9 or a
 * power loss leaves it unclean, and the stamps it then reads carry {@link #DIRTY}: that copy lost what was only in
 * memory, and may hold a write never confirmed, so it is no complete copy any more, only the best of what survived
 * (used once an operator accepts the loss, see ADR 0006).
 *
 * <p>File {@code <dir>/cluster-state}: magic, format version, the clean flag, the stamps as runs of consecutive slots
 * with one stamp, and a CRC32C of all that; written to a temporary file, forced, and moved into place, so that a
 * crash leaves the old file or the new one whole. A missing or damaged file reads as "no copy of any slot" (a damaged
 * one is logged): the node then imports everything it owns, which is safe.
 */
final class NodeState {
    private static final Logger log = LoggerFactory.getLogger(NodeState.class);
    static final String FILE = "cluster-state";
    private static final int MAGIC = 0x4B56544E; // "KVTN"
    private static final int FORMAT = 1;
    /** Stamp flag: the copy may lack acknowledged writes (an unclean stop: what was only in memory is gone). */
    static final long DIRTY = 1;
    /**
     * Stamp flag: the copy holds every acknowledged write but may also hold one its backups never confirmed (a held
     * write given up here, or unresolved at a clean stop): not a copy to import from while a clean one can be had, but
     * the one to complete a slot from when none can (see {@code Importer}).
     */
    static final long UNCONFIRMED = 2;
    /** Either flag: the copy is not trusted as complete. */
    static final long UNTRUSTED = DIRTY | UNCONFIRMED;

    /** What was read: the stamps per slot, and whether the node that wrote them had stopped cleanly. */
    record Loaded(long[] stamps, boolean clean, boolean existed) {
    }

    private final Path file;

    NodeState(Path dir) {
        this.file = dir.resolve(FILE);
    }

    /** Reads the file; an unclean stop makes every stamp {@link #DIRTY}. Never throws for a bad file. */
    Loaded load() {
        long[] stamps = new long[SlotHash.SLOTS];
        if (!Files.exists(file)) {
            return new Loaded(stamps, true, false);
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
            CRC32C crc = new CRC32C();
            crc.update(b.array(), 0, b.limit() - 4);
            if (b.limit() < 17 || b.getInt(0) != MAGIC || b.getInt(b.limit() - 4) != (int) crc.getValue()) {
                log.error("{} is damaged: this node keeps no claim on any copy and imports every slot it owns", file);
                return new Loaded(new long[SlotHash.SLOTS], false, true);
            }
            if (b.getInt(4) != FORMAT) {
                log.error("{} has format {}, this version reads {}: importing every slot it owns", file, b.getInt(4),
                        FORMAT);
                return new Loaded(new long[SlotHash.SLOTS], false, true);
            }
            b.position(8);
            boolean clean = b.get() == 1;
            int runs = b.getInt();
            for (int i = 0; i < runs; i++) {
                int first = Short.toUnsignedInt(b.getShort());
                int last = Short.toUnsignedInt(b.getShort());
                long stamp = b.getLong();
                for (int s = first; s <= last && s < stamps.length; s++) {
                    stamps[s] = clean || stamp == 0 ? stamp : stamp | DIRTY;
                }
            }
            return new Loaded(stamps, clean, true);
        } catch (IOException | RuntimeException e) {
            log.error("cannot read {} ({}): importing every slot this node owns", file, e.toString());
            return new Loaded(new long[SlotHash.SLOTS], false, true);
        }
    }

    /** Writes {@code stamps} with the clean flag, replacing the file atomically and durably. */
    void save(long[] stamps, boolean clean) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeInt(FORMAT);
            out.writeByte(clean ? 1 : 0);
            int runs = 0;
            for (int s = 0; s < stamps.length; ) {
                int e = s;
                while (e + 1 < stamps.length && stamps[e + 1] == stamps[s]) {
                    e++;
                }
                runs++;
                s = e + 1;
            }
            out.writeInt(runs);
            for (int s = 0; s < stamps.length; ) {
                int e = s;
                while (e + 1 < stamps.length && stamps[e + 1] == stamps[s]) {
                    e++;
                }
                out.writeShort(s);
                out.writeShort(e);
                out.writeLong(stamps[s]);
                s = e + 1;
            }
            CRC32C crc = new CRC32C();
            crc.update(bytes.toByteArray());
            out.writeInt((int) crc.getValue());
        }
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(bytes.toByteArray());
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true); // the rename itself
        } catch (IOException e) {
            // some filesystems cannot open a directory for force; the rename is still atomic
        }
    }
}
