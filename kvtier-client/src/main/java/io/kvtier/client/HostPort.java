package io.kvtier.client;

/**
 * A node's address, parsed from "host:port" (or "[v6]:port") as the command line, the membership and {@code -MOVED}
 * replies give it: a non-blank host, without brackets, and a port in 1..65535. Immutable; the host is not resolved.
 *
 * @param host the host name or literal address, non-blank, IPv6 literals without their brackets
 * @param port the port, 1..65535
 */
public record HostPort(String host, int port) {
    /**
     * Parses {@code text}.
     *
     * @param what names the value in error messages, e.g. {@code "--announce"} or {@code "--seeds entry"}
     * @throws IllegalArgumentException naming {@code what}, the value and the rule it breaks
     */
    public static HostPort parse(String text, String what) {
        int colon = text == null ? -1 : text.lastIndexOf(':');
        String host = colon > 0 ? text.substring(0, colon) : "";
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isBlank()) {
            throw new IllegalArgumentException(what + " \"" + text + "\" must be host:port");
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " \"" + text + "\" must be host:port, port a number", e);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(what + " \"" + text + "\" port " + port + " must be in 1..65535");
        }
        return new HostPort(host, port);
    }
}
