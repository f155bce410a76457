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
 * the owner so (the file's inode and a random token written into it at lock time must both still match: inode numbers
 * are reused), and the owner then stops writing there (see DiskTier). Thread-safe.
 */
final class DataDirLock implements AutoCloseable {
    static final String NAME = "LOCK";

    private final Path file;
    private final FileChannel channel;
    private final FileLock lock;
    private final Object fileKey;
    private final byte[] token;

    private DataDirLock(Path file, FileChannel channel, FileLock lock, Object fileKey, byte[] token) {
        this.file = file;
        this.channel = channel;
        this.lock = lock;
        this.fileKey = fileKey;
        this.token = token;
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
            byte[] token = (ProcessHandle.current().pid() + " " + java.util.UUID.randomUUID() + "\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            channel.truncate(0);
            channel.write(java.nio.ByteBuffer.wrap(token), 0);
            return new DataDirLock(file, channel, lock, fileKeyOf(file), token);
        } catch (OverlappingFileLockException e) {
            channel.close();
            throw new IOException("data directory " + dir.toAbsolutePath() + " is already open in this process");
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    private static Object fileKeyOf(Path file) throws IOException {
        return Files.readAttributes(file, BasicFileAttributes.class).fileKey();
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
            Object now = fileKeyOf(file);
            return (now == null || now.equals(fileKey)) && java.util.Arrays.equals(Files.readAllBytes(file), token);
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
