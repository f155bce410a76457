package io.kvtier.router.proxy;

/**
 * A kvtier node the router follows: {@code name} (its RESP host:port, as the lookup API and metrics name it), its
 * store-event endpoint and its replay/snapshot endpoint (the port above by default, as {@code --kv-events} binds).
 */
public record KvtierEndpoint(String name, String events, String replay) {
    /** Parses {@code HOST:PORT,events=tcp://HOST:PORT[,replay=tcp://HOST:PORT]}. */
    public static KvtierEndpoint parse(String spec) {
        String[] parts = spec.trim().split(",");
        String name = parts[0].trim();
        if (!name.matches("[^,:\\s]+:\\d{1,5}")) {
            throw new IllegalArgumentException("--kvtier '" + spec + "': expected HOST:PORT,events=tcp://HOST:PORT");
        }
        String events = null;
        String replay = null;
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].trim();
            if (p.startsWith("events=")) {
                events = p.substring("events=".length());
            } else if (p.startsWith("replay=")) {
                replay = p.substring("replay=".length());
            } else {
                throw new IllegalArgumentException("--kvtier '" + spec + "': unknown part '" + p + "'");
            }
        }
        if (events == null || !events.matches("tcp://[^\\s]+:\\d{1,5}")) {
            throw new IllegalArgumentException("--kvtier '" + spec + "' needs events=tcp://HOST:PORT (the node's "
                    + "--kv-events port)");
        }
        if (replay == null) {
            int colon = events.lastIndexOf(':');
            replay = events.substring(0, colon + 1) + (Integer.parseInt(events.substring(colon + 1)) + 1);
        }
        return new KvtierEndpoint(name, events, replay);
    }

    /** The node's RESP address, {@code name} parsed. */
    public io.kvtier.client.HostPort address() {
        return io.kvtier.client.HostPort.parse(name, "--kvtier");
    }

    /**
     * A RESP connection to this node within {@code timeout} (twice that to connect), authenticated with
     * {@code password} (null: none). The caller closes it.
     *
     * @throws IllegalStateException if the node refuses the password
     */
    public io.kvtier.client.RespConnection connect(io.kvtier.client.ClientResources resources,
                                                   java.time.Duration timeout, String password) throws Exception {
        io.kvtier.client.RespConnection c = io.kvtier.client.RespConnection.connect(resources, address().host(),
                address().port(), new io.kvtier.client.ClientOptions(timeout, timeout))
                .get(timeout.toMillis() * 2, java.util.concurrent.TimeUnit.MILLISECONDS);
        if (password != null) {
            io.kvtier.client.Reply a = c.send("AUTH", password).get(timeout.toMillis(),
                    java.util.concurrent.TimeUnit.MILLISECONDS);
            if (!(a instanceof io.kvtier.client.Reply.Simple)) {
                c.close();
                throw new IllegalStateException(name + " refused the password (" + a + ")");
            }
        }
        return c;
    }
}
