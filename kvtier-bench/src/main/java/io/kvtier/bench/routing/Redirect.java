package io.kvtier.bench.routing;

import io.kvtier.cluster.HostPort;
import io.kvtier.cluster.SlotHash;
import java.util.Optional;

/**
 * A {@code -MOVED slot host:port} error: the slot now lives at {@code target}. Immutable.
 *
 * @param slot   the key's slot
 * @param target the node that serves it
 */
public record Redirect(int slot, HostPort target) {
    private static final String MOVED = "MOVED ";

    /**
     * The redirect in {@code error} (the message without its '-'), or empty when it is another error. An empty host
     * ({@code MOVED 42 :7001}, as Redis 7 may send) means the host of {@code from}, the node that answered.
     */
    public static Optional<Redirect> parse(String error, HostPort from) {
        if (!error.startsWith(MOVED)) {
            return Optional.empty();
        }
        String[] parts = error.substring(MOVED.length()).trim().split(" ");
        if (parts.length != 2) {
            return Optional.empty();
        }
        try {
            int slot = Integer.parseInt(parts[0]);
            if (slot < 0 || slot >= SlotHash.SLOTS) {
                return Optional.empty();
            }
            boolean noHost = parts[1].startsWith(":") && parts[1].indexOf(':', 1) < 0; // ":7001", not "::1:7001"
            String endpoint = noHost ? from.host() + parts[1] : parts[1];
            return Optional.of(new Redirect(slot, HostPort.parse(endpoint, "MOVED target")));
        } catch (IllegalArgumentException malformed) {
            return Optional.empty();
        }
    }
}
