package io.kvtier.bench.load;

import java.io.IOException;
import java.util.List;

/**
 * What a benchmark run talks to: one RESP server ({@link Connections}) or a cluster through a cluster client
 * ({@link ClusterEndpoint}). Owns its connections and I/O threads; opened and closed from one thread, its senders
 * used from any.
 */
public interface Endpoint extends AutoCloseable {
    /** One sender per connection the user asked for ({@code -c}); lanes are spread over them. */
    List<CommandSender> senders();

    /** Deletes {@code keys} and waits (set-up and clean-up); a cluster splits the command by slot. */
    void delete(List<byte[]> keys, long timeoutMillis) throws IOException;

    /** Lines about how the connections fared, printed under the table (closed connections, redirects...). */
    List<String> notes();

    @Override
    void close();
}
