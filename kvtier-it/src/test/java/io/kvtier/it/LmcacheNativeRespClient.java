package io.kvtier.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * The bytes LMCache's native RESP client puts on the wire and the replies it accepts, replayed from Java: the C++
 * {@code RedisConnector} (csrc/storage_backends/redis/connector.cpp, LMCache commit 2827f8e8) driven by
 * {@code ConnectorBase} (csrc/storage_backends/connector_base.h, commit 0b8d0c02). The {@code resp://} remote
 * connector and the multiprocess-mode {@code resp} L2 adapter both use it.
 *
 * <p>How it talks: {@code workers} threads, each owning one TCP connection (opened, then {@code AUTH} if a password
 * is set). A batch of n keys is cut into min(workers, n) tiles of ceil(n / tiles) consecutive keys; the tiles go to
 * a shared queue and each worker runs a tile's commands one at a time on its connection: send a command, read its
 * reply, send the next. So a connection never has more than one command in flight, and a batch has at most
 * {@code workers} in flight. Replies are checked as the C++ code does, by exact bytes and exact lengths, never by a
 * RESP parser: SET reads exactly 5 bytes and wants {@code +OK\r\n}; EXISTS and DEL read exactly 4 and want
 * {@code :1\r\n} or {@code :0\r\n}; GET reads one line that must be {@code $<chunk bytes>\r\n} (or {@code $-1\r\n},
 * a miss), then exactly the chunk's bytes, then {@code \r\n}. Any other byte breaks the connection's framing.
 * A GET that fails marks its key as not loaded and the tile goes on; a SET or EXISTS that fails fails the batch.
 *
 * <p>Thread-safe for one batch at a time; {@link #close()} closes every connection.
 */
final class LmcacheNativeRespClient implements AutoCloseable {
    static final byte[] OK = ascii("+OK\r\n");
    static final byte[] ONE = ascii(":1\r\n");
    static final byte[] ZERO = ascii(":0\r\n");
    private static final byte[] CRLF = ascii("\r\n");
    private static final byte[] GET = ascii("*2\r\n$3\r\nGET\r\n");
    private static final byte[] SET = ascii("*3\r\n$3\r\nSET\r\n");
    private static final byte[] EXISTS = ascii("*2\r\n$6\r\nEXISTS\r\n");
    private static final byte[] DEL = ascii("*2\r\n$3\r\nDEL\r\n");

    private final int workers;
    private final ExecutorService pool;
    private final ThreadLocal<Connection> connection;
    private final List<Connection> opened = new ArrayList<>();
    private final AtomicInteger commands = new AtomicInteger();
    private final List<String> loadFailures = new ArrayList<>();

    /** Connections to 127.0.0.1:{@code port}; {@code username} may be empty, {@code password} empty means no AUTH. */
    LmcacheNativeRespClient(int port, int workers, String username, String password) {
        this.workers = workers;
        this.pool = Executors.newFixedThreadPool(workers);
        this.connection = ThreadLocal.withInitial(() -> open(port, username, password));
    }

    /** What a load does with a chunk it read: called on the worker's thread, the buffer is the caller's to keep. */
    interface Loaded {
        void accept(int index, byte[] chunk);
    }

    /**
     * Stores {@code chunk.apply(i)} under key i; every chunk must be {@code chunkBytes} long (the client refuses
     * others: save_unfull_chunk is off). Chunks are asked for on the worker's thread, just before they are sent.
     */
    void batchSet(List<String> keys, IntFunction<byte[]> chunk, int chunkBytes) throws IOException {
        runTiles(keys.size(), (c, i) -> {
            byte[] buf = chunk.apply(i);
            if (buf.length != chunkBytes) {
                throw new IOException("buffer size mismatch: " + buf.length + " != " + chunkBytes);
            }
            c.send(SET, keyHeader(keys.get(i)), ascii("$" + chunkBytes + "\r\n"), buf, CRLF);
            c.expect(OK, "SET " + keys.get(i));
            return true;
        });
    }

    /** One flag per key: does it exist. */
    boolean[] batchExists(List<String> keys) throws IOException {
        return runTiles(keys.size(), (c, i) -> c.integerReply(EXISTS, keys.get(i)));
    }

    /** One flag per key: was it deleted. */
    boolean[] batchDelete(List<String> keys) throws IOException {
        return runTiles(keys.size(), (c, i) -> c.integerReply(DEL, keys.get(i)));
    }

    /**
     * Reads each key into a fresh {@code chunkBytes} buffer handed to {@code loaded}; one flag per key: was it loaded
     * (a miss or a bad reply is false, and the reason is kept in {@link #loadFailures()}).
     */
    boolean[] batchGet(List<String> keys, int chunkBytes, Loaded loaded) throws IOException {
        return runTiles(keys.size(), (c, i) -> {
            try {
                byte[] buf = new byte[chunkBytes];
                c.get(keys.get(i), buf, chunkBytes);
                loaded.accept(i, buf);
                return true;
            } catch (IOException failed) { // a miss keeps the connection in step; anything else does not
                synchronized (loadFailures) {
                    loadFailures.add(failed.getMessage());
                }
                return false;
            }
        });
    }

    /** Why loads failed, in no particular order: "GET key: key not found" for a miss. */
    List<String> loadFailures() {
        synchronized (loadFailures) {
            return List.copyOf(loadFailures);
        }
    }

    /** Commands sent since this client was made, AUTH excluded. */
    int commandsSent() {
        return commands.get();
    }

    /** Connections the workers opened (one per worker that ran a tile). */
    int connectionsOpened() {
        synchronized (opened) {
            return opened.size();
        }
    }

    private interface KeyOp {
        boolean run(Connection c, int index) throws IOException;
    }

    /** ConnectorBase's fan-out: min(workers, n) tiles of ceil(n / tiles) keys, each tile sequential on one worker. */
    private boolean[] runTiles(int n, KeyOp op) throws IOException {
        int tiles = Math.min(workers, n);
        int tileSize = (n + tiles - 1) / tiles;
        boolean[] results = new boolean[n];
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < tiles; t++) {
            int start = t * tileSize;
            int end = Math.min(start + tileSize, n);
            running.add(pool.submit(() -> {
                for (int i = start; i < end; i++) {
                    results[i] = op.run(connection.get(), i);
                }
                return null;
            }));
        }
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (ExecutionException e) {
                throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        }
        return results;
    }

    private Connection open(int port, String username, String password) {
        try {
            Connection c = new Connection(port);
            if (!password.isEmpty()) {
                c.auth(username, password);
            }
            synchronized (opened) {
                opened.add(c);
            }
            return c;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void close() throws IOException {
        pool.shutdownNow();
        synchronized (opened) {
            for (Connection c : opened) {
                c.socket.close();
            }
        }
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] keyHeader(String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream(k.length + 16);
        out.writeBytes(ascii("$" + k.length + "\r\n"));
        out.writeBytes(k);
        out.writeBytes(CRLF);
        return out.toByteArray();
    }

    /** A GET answered {@code $-1\r\n}: the key is absent, and the connection is still in step. */
    private static final class MissException extends IOException {
        MissException(String key) {
            super("GET " + key + ": key not found");
        }
    }

    /** One worker's socket: sends whole commands, reads replies by exact length as the C++ client does. */
    private final class Connection {
        private final Socket socket;
        private final OutputStream out;
        private final InputStream in;

        Connection(int port) throws IOException {
            socket = new Socket();
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            socket.setSoTimeout(30_000);
            socket.setTcpNoDelay(true);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
        }

        void auth(String username, String password) throws IOException {
            byte[] prefix = username.isEmpty() ? ascii("*2\r\n$4\r\nAUTH\r\n") : ascii("*3\r\n$4\r\nAUTH\r\n");
            byte[] user = username.isEmpty() ? new byte[0] : keyHeader(username);
            out.write(concat(prefix, user, keyHeader(password)));
            out.flush();
            String line = new String(line(64), StandardCharsets.ISO_8859_1);
            if (!line.startsWith("+OK\r\n")) {
                throw new IOException("AUTH failed: " + line.strip());
            }
        }

        void send(byte[]... parts) throws IOException {
            commands.incrementAndGet();
            int small = 0;
            for (int p = 0; p < parts.length && parts[p].length < 4096; p++) {
                small++;
            }
            out.write(concat(Arrays.copyOf(parts, small))); // the headers in one write, as writev would
            for (int p = small; p < parts.length; p++) {
                out.write(parts[p]);
            }
            out.flush();
        }

        void expect(byte[] reply, String what) throws IOException {
            byte[] got = in.readNBytes(reply.length);
            if (!Arrays.equals(got, reply)) {
                throw new IOException(what + ": expected " + show(reply) + ", got " + show(got));
            }
        }

        boolean integerReply(byte[] prefix, String key) throws IOException {
            send(prefix, keyHeader(key));
            byte[] got = in.readNBytes(ONE.length);
            if (Arrays.equals(got, ONE)) {
                return true;
            }
            if (Arrays.equals(got, ZERO)) {
                return false;
            }
            throw new IOException(new String(prefix, StandardCharsets.US_ASCII).split("\r\n")[2] + " " + key
                    + ": reply was not :0\\r\\n or :1\\r\\n but " + show(got));
        }

        void get(String key, byte[] buf, int chunkBytes) throws IOException {
            send(GET, keyHeader(key));
            byte[] sizeHeader = ascii("$" + chunkBytes + "\r\n");
            byte[] header = line(sizeHeader.length + 32);
            if (Arrays.equals(header, ascii("$-1\r\n"))) {
                throw new MissException(key);
            }
            if (!Arrays.equals(header, sizeHeader)) {
                throw new IOException("GET " + key + ": size header " + show(header) + ", expected "
                        + show(sizeHeader));
            }
            if (in.readNBytes(buf, 0, chunkBytes) != chunkBytes) {
                throw new IOException("GET " + key + ": connection closed inside the payload");
            }
            expect(CRLF, "GET " + key + " trailer");
        }

        /** Bytes up to and including the first LF, at most {@code limit} of them (the C++ header loop). */
        private byte[] line(int limit) throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            while (true) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("connection closed inside a reply line " + show(line.toByteArray()));
                }
                line.write(b);
                if (b == '\n') {
                    return line.toByteArray();
                }
                if (line.size() > limit) {
                    throw new IOException("reply line too long: " + show(line.toByteArray()));
                }
            }
        }
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static String show(byte[] bytes) {
        String s = new String(bytes, 0, Math.min(bytes.length, 80), StandardCharsets.ISO_8859_1);
        return "\"" + s.replace("\r", "\\r").replace("\n", "\\n") + (bytes.length > 80 ? "..." : "") + "\"";
    }
}
