package io.kvtier.router.proxy;

import java.net.URI;

/**
 * One engine as the router is told of it: {@code URL[,events=tcp://HOST:PORT][,replay=tcp://HOST:PORT]}, e.g.
 * {@code http://10.0.0.5:8000,events=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:5558}. Without events the engine is
 * scored by load only (and by the router's own bookkeeping under {@code approx-prefix}).
 */
public record EngineEndpoint(String id, URI url, String events, String replay) {
    public static EngineEndpoint parse(String spec) {
        String[] parts = spec.split(",");
        URI url;
        try {
            url = URI.create(parts[0].endsWith("/") ? parts[0].substring(0, parts[0].length() - 1) : parts[0]);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--engine " + spec + ": " + parts[0] + " is not a URL");
        }
        if (!"http".equals(url.getScheme()) || url.getHost() == null || url.getPort() < 0) {
            throw new IllegalArgumentException("--engine " + spec + ": expected http://HOST:PORT first");
        }
        String events = null;
        String replay = null;
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            if (p.startsWith("events=tcp://")) {
                events = p.substring("events=".length());
            } else if (p.startsWith("replay=tcp://")) {
                replay = p.substring("replay=".length());
            } else {
                throw new IllegalArgumentException("--engine " + spec + ": " + p
                        + " is neither events=tcp://HOST:PORT nor replay=tcp://HOST:PORT");
            }
        }
        if (replay != null && events == null) {
            throw new IllegalArgumentException("--engine " + spec + ": replay= needs events= too");
        }
        return new EngineEndpoint(url.getHost() + ":" + url.getPort(), url, events, replay);
    }
}
