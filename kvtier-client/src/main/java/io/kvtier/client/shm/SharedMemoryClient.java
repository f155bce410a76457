package io.kvtier.client.shm;

import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/*
 * Loads and saves values through a kvtier server's shared memory (KVC.SHM) when the server runs on this host and
 * this process may map its memory, over the connection's RESP otherwise: the same calls either way.
 *
 * open() asks KVC.SHM.HELLO for the check segment's path and token and compares the token it reads there: equal
 * means this process maps the server's memory (same host, same user, a /proc that shows the server). A load takes a
 * read lease (KVC.SHM.GET), copies the extents out of the mapped slabs, and releases: the release's 1 says the lease
 * held throughout, so the copy is the value; 0 (it expired under a stalled reader) means the copy may hold another
 * value's bytes, and the load is done again over RESP. A value the server has only on disk comes over RESP (GET). A
 * save reserves memory (KVC.SHM.RESERVE), copies into it, and commits (KVC.SHM.COMMIT), which the server answers as
 * SET; a refused reservation (a value too large for memory, leases full) is sent as SET instead. Slabs are mapped read-write once each and kept until close(): the server never gives a lease's bytes to
 * another value while the lease holds, and this class writes only into its own reservations.
 */
/** A kvtier server's values through shared memory when it is local: see the essay above. Not thread-safe. */
public final class SharedMemoryClient implements AutoCloseable {
    private final RespConnection connection;
    private final long timeoutMillis;
    private final boolean local;
    private final long serverPid;
    private final Arena arena = Arena.ofShared();
    private MemorySegment[] slabs = new MemorySegment[0];

    private SharedMemoryClient(RespConnection connection, long timeoutMillis, boolean local, long serverPid) {
        this.connection = connection;
        this.timeoutMillis = timeoutMillis;
        this.local = local;
        this.serverPid = serverPid;
    }

    /**
     * A client over {@code connection} (authenticated already if the server wants a password), using shared memory
     * when the server offers it and this process can map it, RESP otherwise.
     */
    public static SharedMemoryClient open(RespConnection connection, long timeoutMillis) throws IOException {
        return open(connection, timeoutMillis, true);
    }

    /** As {@link #open(RespConnection, long)}; with {@code shared} false, RESP only (a benchmark's TCP side). */
    public static SharedMemoryClient open(RespConnection connection, long timeoutMillis, boolean shared)
            throws IOException {
        if (!shared) {
            return new SharedMemoryClient(connection, timeoutMillis, false, -1);
        }
        Reply hello = call(connection, timeoutMillis, "KVC.SHM.HELLO");
        long pid = -1;
        boolean local = false;
        if (hello instanceof Reply.Aggregate a) {
            String check = null;
            String token = null;
            List<Reply> e = a.elements();
            for (int i = 0; i + 1 < e.size(); i += 2) {
                String name = text(e.get(i));
                if (name.equals("check")) {
                    check = text(e.get(i + 1));
                } else if (name.equals("token")) {
                    token = text(e.get(i + 1));
                } else if (name.equals("pid")) {
                    pid = Long.parseLong(text(e.get(i + 1)));
                }
            }
            local = check != null && token != null && token.equals(readToken(check, token.length()));
        }
        Reply.release(hello);
        return new SharedMemoryClient(connection, timeoutMillis, local, local ? pid : -1);
    }

    /** The server's process id when it is local (KVC.SHM.HELLO), else -1. */
    public long serverPid() {
        return serverPid;
    }

    /** Whether loads and saves go through shared memory (else RESP). */
    public boolean local() {
        return local;
    }

    private static String readToken(String path, int length) {
        try (FileChannel ch = FileChannel.open(Path.of(path), StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(length);
            while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
                // read it all
            }
            return new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII);
        } catch (IOException | SecurityException e) {
            return null; // not this host, not this user, or no such /proc: RESP it is
        }
    }

    /**
     * Copies the value of {@code key} into {@code out} (from its position; it must have room) and returns its
     * length, or -1 when there is no such key.
     *
     * @throws IllegalArgumentException if {@code out} has less room than the value
     */
    public long load(byte[] key, ByteBuffer out) throws IOException {
        if (local) {
            Reply r = call(connection, timeoutMillis, "KVC.SHM.GET", key);
            try {
                if (r instanceof Reply.Null) {
                    return -1;
                }
                if (r instanceof Reply.Aggregate a) {
                    long[] lease = longs(a);
                    long length = lease[1];
                    if (length > out.remaining()) {
                        release(lease[0]);
                        throw new IllegalArgumentException("value of " + length + " bytes, room for "
                                + out.remaining());
                    }
                    int start = out.position();
                    copyOut(lease, out);
                    if (release(lease[0]) == 1) {
                        return length;
                    }
                    out.position(start); // the lease expired while we copied: the bytes may be another value's
                }
            } finally {
                Reply.release(r);
            }
        }
        Reply r = call(connection, timeoutMillis, "GET", key);
        try {
            if (r instanceof Reply.Null) {
                return -1;
            }
            io.netty.buffer.ByteBuf content = ((Reply.Bulk) r).content();
            int n = content.readableBytes();
            if (n > out.remaining()) {
                throw new IllegalArgumentException("value of " + n + " bytes, room for " + out.remaining());
            }
            ByteBuffer dst = out.slice(out.position(), n);
            content.getBytes(content.readerIndex(), dst);
            out.position(out.position() + n);
            return n;
        } finally {
            Reply.release(r);
        }
    }

    /** Stores {@code value}'s remaining bytes under {@code key}, as SET does; consumes them. */
    public void save(byte[] key, ByteBuffer value) throws IOException {
        if (local) {
            Reply r = call(connection, timeoutMillis, "KVC.SHM.RESERVE", key, Long.toString(value.remaining()));
            try {
                if (r instanceof Reply.Aggregate a) {
                    long[] lease = longs(a);
                    copyIn(lease, value);
                    Reply done = call(connection, timeoutMillis, "KVC.SHM.COMMIT", Long.toString(lease[0]));
                    try {
                        if (done instanceof Reply.Simple) {
                            return;
                        }
                        throw new IOException("KVC.SHM.COMMIT: " + describe(done));
                    } finally {
                        Reply.release(done);
                    }
                }
                if (!(r instanceof Reply.Error)) {
                    throw new IOException("KVC.SHM.RESERVE: " + describe(r));
                } // refused (a value for the disk alone, leases full): SET it, which says why if it fails too
            } finally {
                Reply.release(r);
            }
        }
        Reply r = call(connection, timeoutMillis, "SET", key, Unpooled.wrappedBuffer(value.slice()));
        try {
            if (!(r instanceof Reply.Simple)) {
                throw new IOException("SET: " + describe(r));
            }
            value.position(value.limit());
        } finally {
            Reply.release(r);
        }
    }

    private int release(long lease) throws IOException {
        Reply r = call(connection, timeoutMillis, "KVC.SHM.RELEASE", Long.toString(lease));
        try {
            return r instanceof Reply.Int i ? (int) i.value() : 0;
        } finally {
            Reply.release(r);
        }
    }

    private void copyOut(long[] lease, ByteBuffer out) throws IOException {
        MemorySegment dst = MemorySegment.ofBuffer(out);
        long at = 0;
        for (int i = 2; i + 2 < lease.length; i += 3) {
            MemorySegment slab = slab((int) lease[i]);
            MemorySegment.copy(slab, lease[i + 1], dst, at, lease[i + 2]);
            at += lease[i + 2];
        }
        out.position(out.position() + (int) at);
    }

    private void copyIn(long[] lease, ByteBuffer value) throws IOException {
        MemorySegment src = MemorySegment.ofBuffer(value);
        long at = 0;
        for (int i = 2; i + 2 < lease.length; i += 3) {
            MemorySegment slab = slab((int) lease[i]);
            MemorySegment.copy(src, at, slab, lease[i + 1], lease[i + 2]);
            at += lease[i + 2];
        }
        value.position(value.position() + (int) at);
    }

    /** Slab {@code n}, mapped on first use. */
    private MemorySegment slab(int n) throws IOException {
        if (n < slabs.length && slabs[n] != null) {
            return slabs[n];
        }
        Reply r = call(connection, timeoutMillis, "KVC.SHM.SLAB", Integer.toString(n));
        try {
            if (!(r instanceof Reply.Aggregate a) || a.elements().size() != 2) {
                throw new IOException("KVC.SHM.SLAB " + n + ": " + describe(r));
            }
            String path = text(a.elements().get(0));
            long size = ((Reply.Int) a.elements().get(1)).value();
            try (FileChannel ch = FileChannel.open(Path.of(path), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                MemorySegment mapped = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
                if (n >= slabs.length) {
                    slabs = java.util.Arrays.copyOf(slabs, n + 1);
                }
                slabs[n] = mapped;
                return mapped;
            }
        } finally {
            Reply.release(r);
        }
    }

    private static long[] longs(Reply.Aggregate a) {
        long[] out = new long[a.elements().size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ((Reply.Int) a.elements().get(i)).value();
        }
        return out;
    }

    private static String text(Reply r) {
        return switch (r) {
            case Reply.Bulk b -> b.utf8();
            case Reply.Simple s -> s.text();
            case Reply.Int i -> Long.toString(i.value());
            default -> String.valueOf(r);
        };
    }

    private static String describe(Reply r) {
        return r instanceof Reply.Error e ? e.message() : String.valueOf(r);
    }

    private static Reply call(RespConnection c, long timeoutMillis, Object... args) throws IOException {
        try {
            return c.send(args).get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException(args[0] + " timed out after " + timeoutMillis + " ms", e);
        }
    }

    /** Unmaps the slabs; the connection stays the caller's. */
    @Override
    public void close() {
        arena.close();
    }

    /** For tests: the byte at {@code offset} of slab {@code n} as this client maps it. */
    byte peek(int n, long offset) throws IOException {
        return slab(n).get(ValueLayout.JAVA_BYTE, offset);
    }
}
