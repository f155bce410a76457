package io.kvtier.client.cluster;

import io.kvtier.client.HostPort;

/**
 * An error reply as a cluster client reads it, parsed from its text in this one place: {@code -MOVED} and
 * {@code -ASK} name a slot and the node that serves it, {@code -TRYAGAIN} and {@code -CLUSTERDOWN} say the cluster
 * cannot serve the command now, anything else (including a MOVED or ASK that does not parse) is {@link Other}. Every
 * kind keeps the error's first word as its {@link #code}, which is how failures are counted. Immutable.
 */
public sealed interface ClusterError {
    /** The error's first word: {@code MOVED}, {@code TRYAGAIN}, {@code ERR}...; the whole message if it has one. */
    String code();

    /** {@code -MOVED slot host:port}: the slot now lives at {@code target}; the client should remember it. */
    record Moved(int slot, HostPort target) implements ClusterError {
        @Override
        public String code() {
            return "MOVED";
        }
    }

    /** {@code -ASK slot host:port}: the slot is migrating; this one command may be retried at {@code target}. */
    record Ask(int slot, HostPort target) implements ClusterError {
        @Override
        public String code() {
            return "ASK";
        }
    }

    /** {@code -TRYAGAIN ...}: the node cannot serve the command right now (a slot table being installed...). */
    record TryAgain(String message) implements ClusterError {
        @Override
        public String code() {
            return "TRYAGAIN";
        }
    }

    /** {@code -CLUSTERDOWN ...}: the slot is not served (no primary, or the cluster is not formed). */
    record ClusterDown(String message) implements ClusterError {
        @Override
        public String code() {
            return "CLUSTERDOWN";
        }
    }

    /** Any other error, kept whole. */
    record Other(String code, String message) implements ClusterError {
    }

    /**
     * Reads {@code error} (the message without its '-'), as answered by {@code from}. An empty host in a redirect
     * ({@code MOVED 42 :7001}, as Redis 7 may send) means the host of {@code from}.
     */
    public static ClusterError parse(String error, HostPort from) {
        String code = code(error);
        return switch (code) {
            case "MOVED", "ASK" -> redirect(code, error, from);
            case "TRYAGAIN" -> new TryAgain(error);
            case "CLUSTERDOWN" -> new ClusterDown(error);
            default -> new Other(code, error);
        };
    }

    /** The first word of {@code error}, without parsing the rest. */
    static String code(String error) {
        int space = error.indexOf(' ');
        return space > 0 ? error.substring(0, space) : error;
    }

    private static ClusterError redirect(String code, String error, HostPort from) {
        String[] parts = error.substring(code.length()).trim().split(" ");
        if (parts.length != 2) {
            return new Other(code, error);
        }
        try {
            int slot = Integer.parseInt(parts[0]);
            if (slot < 0 || slot >= SlotHash.SLOTS) {
                return new Other(code, error);
            }
            boolean noHost = parts[1].startsWith(":") && parts[1].indexOf(':', 1) < 0; // ":7001", not "::1:7001"
            HostPort target = HostPort.parse(noHost ? from.host() + parts[1] : parts[1], code + " target");
            return code.equals("MOVED") ? new Moved(slot, target) : new Ask(slot, target);
        } catch (IllegalArgumentException malformed) {
            return new Other(code, error);
        }
    }
}
