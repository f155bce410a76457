package io.kvtier.bench.routing;

import io.kvtier.bench.load.CommandSender;
import io.kvtier.bench.load.Endpoint;
import io.kvtier.client.Reply;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * A cluster as a benchmark {@link Endpoint}: {@code connections} senders, sender {@code i} sending each command on
 * connection {@code i mod share} of its key's primary. Owns the router; opened and closed from one thread, senders
 * used from any.
 */
public final class ClusterEndpoint implements Endpoint {
    private final ClusterRouter router;
    private final List<CommandSender> senders;

    private ClusterEndpoint(ClusterRouter router, int connections) {
        this.router = router;
        this.senders = IntStream.range(0, connections).mapToObj(this::sender).toList();
    }

    /** Learns the slot map from {@code options.entry()} and connects to every primary. */
    public static ClusterEndpoint open(RouterOptions options, CommandObserver observer) throws IOException {
        return new ClusterEndpoint(ClusterRouter.open(options, observer), options.connections());
    }

    private CommandSender sender(int lane) {
        return new CommandSender() {
            @Override
            public CompletableFuture<Reply> send(byte[] key, Object... args) {
                return router.send(lane, key, args);
            }

            @Override
            public boolean isOpen() {
                return router.isOpen();
            }
        };
    }

    public ClusterRouter router() {
        return router;
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
            replies.add(router.send(0, key, "DEL", key));
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
        return router.notes();
    }

    @Override
    public void close() {
        router.close();
    }
}
