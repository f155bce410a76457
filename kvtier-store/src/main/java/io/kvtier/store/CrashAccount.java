package io.kvtier.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a crash would lose, written down as the store runs, so that a restart after one can say what was lost: a kill
 * -9, a crash or a power loss keeps what the disk tier holds and loses the values that were only in memory. Once a
 * second, when it changed, the store records how many values (and bytes) were in memory at most (those also on disk
 * are counted too: an upper bound), and whether it is running; a clean close records that it stopped cleanly. A store
 * that opens to a record of a running store stopped uncleanly, and says so once, with those figures.
 *
 * <p>File {@code <dir>/store-state}: 33 bytes (running flag, unix millis, keys, bytes), replaced atomically, not
 * forced (a power loss may leave an older record: the figures are then a second or more old).
 */
final class CrashAccount {
    private static final Logger log = LoggerFactory.getLogger(CrashAccount.class);
    static final String FILE = "store-state";

    /** What the previous run left: whether it stopped cleanly and, if not, its last figures. */
    record Previous(boolean clean, long atMillis, long keys, long bytes) {
        static final Previous NONE = new Previous(true, 0, 0, 0);
    }

    private final Path file;
    private final Previous previous;
    private long lastKeys = -1;
    private long lastBytes = -1;

    CrashAccount(Path dir) {
        this.file = dir.resolve(FILE);
        this.previous = read(file);
        if (!previous.clean()) {
            log.warn("the store did not stop cleanly last time (a crash, kill -9 or power loss): what the disk tier "
                    + "held is recovered, and up to {} values ({} bytes) that were only in memory at {} are lost",
                    previous.keys(), previous.bytes(), Instant.ofEpochMilli(previous.atMillis()));
        }
    }

    /** What the previous run left (clean if there was none). */
    Previous previous() {
        return previous;
    }

    /** Records the running store's figures if they changed (the store's timer, once a second). */
    void running(long keys, long bytes) {
        if (keys == lastKeys && bytes == lastBytes) {
            return;
        }
        lastKeys = keys;
        lastBytes = bytes;
        write(false, keys, bytes);
    }

    /** Records a clean stop: everything in memory was written to disk. */
    void stoppedCleanly() {
        write(true, 0, 0);
    }

    private void write(boolean clean, long keys, long bytes) {
        ByteBuffer b = ByteBuffer.allocate(33);
        b.put((byte) (clean ? 1 : 0)).putLong(System.currentTimeMillis()).putLong(keys).putLong(bytes).putLong(0);
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try {
            Files.write(tmp, b.array());
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            log.debug("cannot record the store's state in {}: {}", file, e.toString());
        }
    }

    private static Previous read(Path file) {
        try {
            if (!Files.exists(file)) {
                return Previous.NONE;
            }
            ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
            if (b.limit() < 25) {
                return new Previous(false, 0, 0, 0);
            }
            return new Previous(b.get() == 1, b.getLong(), b.getLong(), b.getLong());
        } catch (IOException e) {
            return new Previous(false, 0, 0, 0);
        }
    }
}
