package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * The data directory's exclusive OS lock (an fcntl lock on {@code LOCK} through {@link FileChannel#tryLock}), held
 * from open to close: one process per directory. A lock only guards the inode it was taken on, so if the directory
 * is deleted under a running node a second node can lock a new {@code LOCK} at the same path; {@link #stillHeld} tells
 * the owner so (the path's device and inode must still be those of the file it holds open), and the owner then stops
 * writing there (see DiskTier). Nothing here opens the file a second time: closing any descriptor of it would
 * release the process's lock. Thread-safe.
 */
final class DataDirLock implements AutoCloseable {
    static final String NAME = "LOCK";

    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;
    private final Object identity;

    private DataDirLock(Path file, FileChannel channel, FileLock lock, Object identity) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
        this.identity = identity;
    }

    /**
     * The file's device and inode (its fileKey), from a stat: never by opening the file, because closing any
     * descriptor of it would drop this process's fcntl lock. The inode number cannot be reused by a new LOCK while
     * this process holds the old one open, so equal keys mean the same file.
     */
    private static Object identityOf(Path file) throws IOException {
        return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    }

    /**
     * Takes the lock of {@code dir}.
     *
     * @throws IOException naming the directory if another process (or this one) holds it
     */
    static DataDirLock acquire(Path dir) throws IOException {
        Path file = dir.resolve(NAME);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            FileLock lock = channel.tryLock();
            if (lock == null) {
                throw new IOException("data directory " + dir.toAbsolutePath() + " is in use by another kvtier "
                        + "process (it holds the lock on " + file + ")");
            }
            byte[] holder = ("pid " + ProcessHandle.current().pid() + "\n") // for an operator: who holds it
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            channel.truncate(0);
            channel.write(java.nio.ByteBuffer.wrap(holder), 0);
            return new DataDirLock(file, channel, lock, identityOf(file));
        } catch (OverlappingFileLockException e) {
            channel.close();
            throw new IOException("data directory " + dir.toAbsolutePath() + " is already open in this process");
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Whether {@code LOCK} at the directory's path is still the file this lock holds. False once the directory (or
     * the file) was deleted or replaced: files created at the path now would land where another process may write.
     */
    boolean stillHeld() {
        if (!lock.isValid()) {
            return false;
        }
        try {
            Object now = identityOf(file);
            return now == null || now.equals(identity); // null: no inode numbers here, nothing to compare
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            return false;
        }
    }

    Path file() {
        return file;
    }

    @Override
    public void close() throws IOException {
        channel.close(); // releases the lock
    }
}
