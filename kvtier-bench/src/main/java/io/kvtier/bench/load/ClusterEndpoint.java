package io.kvtier.bench.load;

import io.kvtier.client.Reply;
import io.kvtier.client.cluster.ClusterClient;
import io.kvtier.client.cluster.ClusterClientOptions;
import io.kvtier.client.cluster.CommandObserver;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * A cluster as a benchmark {@link Endpoint} ({@code --cluster}): {@code connections} senders over a
 * {@link ClusterClient}, sender {@code i} sending each command on lane {@code i}, that is on connection
 * {@code i mod share} of its key's primary. Owns the client; opened and closed from one thread, senders used from
 * any.
 */
public final class ClusterEndpoint implements Endpoint {
    private final ClusterClient client;
    private final List<CommandSender> senders;

    private ClusterEndpoint(ClusterClient client, int connections) {
        this.client = client;
        this.senders = IntStream.range(0, connections).mapToObj(this::sender).toList();
    }

    /**
     * Learns the slot map from {@code options.entry()} and connects to every primary.
     *
     * @throws IOException prefixed with {@code --cluster:} and naming the flags to check
     */
    public static ClusterEndpoint open(ClusterClientOptions options, CommandObserver observer) throws IOException {
        ClusterClient client;
        try {
            client = ClusterClient.open(options, observer);
        } catch (IOException e) {
            throw new IOException("--cluster: " + e.getMessage()
                    + " (--host, --port; without --cluster the bench talks to one server)", e);
        }
        return new ClusterEndpoint(client, options.connections());
    }

    private CommandSender sender(int lane) {
        return new CommandSender() {
            @Override
            public CompletableFuture<Reply> send(byte[] key, Object... args) {
                return client.send(lane, key, args);
            }

            @Override
            public boolean isOpen() {
                return client.isOpen();
            }
        };
    }

    public ClusterClient client() {
        return client;
    }

    @Override
    public List<CommandSender> senders() {
        return senders;
    }

    /** One DEL per key (keys of several slots cannot share a DEL on a cluster), all in flight at once. */
    @Override
    public void delete(List<byte[]> keys, long timeoutMillis) throws IOException {
        List<CompletableFuture<Reply>> replies = new ArrayList<>();
        for (byte[] key : keys) {
            replies.add(client.send(0, key, "DEL", key));
        }
        try {
            CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).get(timeoutMillis,
                    TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while deleting " + keys.size() + " keys", e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("deleting " + keys.size() + " keys failed: " + e, e);
        } finally {
            replies.forEach(r -> r.thenAccept(Reply::release));
        }
    }

    @Override
    public List<String> notes() {
        return client.notes();
    }

    @Override
    public void close() {
        client.close();
    }
}
