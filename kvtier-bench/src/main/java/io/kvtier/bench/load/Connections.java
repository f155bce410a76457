package io.kvtier.bench.load;

import io.kvtier.client.ClientOptions;
import io.kvtier.client.ClientResources;
import io.kvtier.client.Reply;
import io.kvtier.client.RespConnection;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The benchmark's connections to one RESP endpoint, authenticated when a password is given, and the client
 * resources (event loops) they run on. Owns both: {@link #close()} closes the connections, then the event loops.
 * Opened and closed from one thread; the connections themselves are thread-safe.
 */
public final class Connections implements Endpoint {
    private final ClientResources resources;
    private final List<RespConnection> list;
    private final String host;
    private final int port;

    private Connections(ClientResources resources, List<RespConnection> list, String host, int port) {
        this.resources = resources;
        this.list = List.copyOf(list);
        this.host = host;
        this.port = port;
    }

    /**
     * Opens {@code count} connections on {@code min(count, cores)} event loops, over TLS with {@code tls} (null: plain).
     *
     * @throws IOException naming the endpoint and what to check when it cannot be reached or refuses the password
     */
    public static Connections open(String host, int port, String password, int count, ClientOptions options,
            io.netty.handler.ssl.SslContext tls) throws IOException {
        int threads = Math.max(1, Math.min(count, Runtime.getRuntime().availableProcessors()));
        ClientResources resources = ClientResources.create(threads);
        List<RespConnection> opened = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                RespConnection c = await(RespConnection.connect(resources, host, port, options, tls), host, port,
                        options.connectTimeout().toMillis() + 1000);
                opened.add(c);
                if (password != null) {
                    authenticate(c, password, host, port, options.commandTimeout().toMillis() + 1000);
                }
            }
            return new Connections(resources, opened, host, port);
        } catch (IOException | RuntimeException e) {
            opened.forEach(RespConnection::close);
            resources.close();
            throw e;
        }
    }

    public List<RespConnection> list() {
        return list;
    }

    @Override
    public List<CommandSender> senders() {
        return list.stream().map(CommandSender::of).toList();
    }

    @Override
    public void delete(List<byte[]> keys, long timeoutMillis) throws IOException {
        List<Object> del = new ArrayList<>();
        del.add("DEL");
        del.addAll(keys);
        Reply.release(call(timeoutMillis, del.toArray()));
    }

    @Override
    public List<String> notes() {
        long closed = list.stream().filter(c -> !c.isOpen()).count();
        if (closed == 0) {
            return List.of();
        }
        return List.of(String.format("note: %d of %d connections closed during the run (a timeout closes its"
                + " connection); the phases after that ran on the rest", closed, list.size()));
    }

    private static void authenticate(RespConnection c, String password, String host, int port, long timeoutMillis)
            throws IOException {
        Reply reply = await(c.send(Lane.ascii("AUTH"), Lane.ascii(password)), host, port, timeoutMillis);
        try {
            if (!(reply instanceof Reply.Simple(String text) && text.equals("OK"))) {
                throw new IOException("AUTH at " + host + ":" + port + " failed (" + Lane.describe(reply, null)
                        + "); check --password");
            }
        } finally {
            Reply.release(reply);
        }
    }

    private static <T> T await(CompletableFuture<T> future, String host, int port, long timeoutMillis)
            throws IOException {
        try {
            return future.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while connecting to " + host + ":" + port, e);
        } catch (ExecutionException | CompletionException | TimeoutException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IOException("cannot reach " + host + ":" + port + " (" + cause.getClass().getSimpleName()
                    + (cause.getMessage() == null ? "" : ": " + cause.getMessage())
                    + "); is the server running there? (--host, --port)", cause);
        }
    }

    /** Sends one command on the first connection and waits for its reply (for set-up and clean-up). */
    public Reply call(long timeoutMillis, Object... args) throws IOException {
        RespConnection first = list.getFirst();
        return await(first.send(args), host, port, timeoutMillis);
    }

    @Override
    public void close() {
        list.forEach(RespConnection::close);
        resources.close();
    }
}
