package io.kvtier.router.proxy;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * One engine as the router is told of it: {@code URL[,events=tcp://HOST:PORT][,replay=tcp://HOST:PORT][,topic=T]
 * [,dp=N[,dp-start=R]]}, e.g. {@code http://10.0.0.5:8000,events=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:5558}. Without
 * events the engine is scored by load only (and by the router's own bookkeeping under {@code approx-prefix}).
 *
 * <p>Events where the host is {@code *} ({@code events=tcp://*:5557}) are bound by the router, and the engine's
 * publisher connects to it (vLLM connects where its endpoint names a host: llm-d's "centralized" mode). Several engines
 * may name one bound endpoint, each with a {@code topic=} of its own (vLLM's {@code kv_events_config.topic}; llm-d's
 * pods publish under {@code kv@POD_IP@MODEL}): the router reads the port once and hands each engine the messages under
 * its topic ({@code SharedEventPort}). {@code {host}} in the topic is the engine URL's host, so that
 * {@code topic=kv@{host}@} names every pod of an {@code --engine-dns} the way llm-d does. Without {@code topic=} the
 * engine takes every message on its endpoint (vLLM's default topic is empty).
 *
 * <p>Data parallelism: a vLLM server of {@code dp=N} ranks (ranks {@code R..R+N-1}, {@code dp-start=R}, 0 by default:
 * the ranks behind this URL of a multi-node deployment) is N engines, {@code HOST:PORT/dpRANK}, one per rank: each has
 * its own KV events, on the event and replay ports plus the rank (vLLM offsets both by the rank), its own load (vLLM's
 * metrics labelled {@code engine="RANK"}), and gets its requests with the header {@code X-data-parallel-rank: RANK},
 * which vLLM's OpenAI server honours.
 *
 * @param dpRank the data-parallel rank requests are sent to; null: the server chooses (not data-parallel)
 * @param topic  the topic the engine's events are taken under ("" takes all: vLLM's default)
 */
public record EngineEndpoint(String id, URI url, String events, String replay, Integer dpRank, boolean bindEvents,
                             String topic) {
    public EngineEndpoint {
        topic = topic == null ? "" : topic;
    }

    public EngineEndpoint(String id, URI url, String events, String replay) {
        this(id, url, events, replay, null, false, "");
    }

    /** One engine; refuses a spec of several ({@code dp=} above 1: use {@link #parseAll}). */
    public static EngineEndpoint parse(String spec) {
        List<EngineEndpoint> all = parseAll(spec);
        if (all.size() != 1) {
            throw new IllegalArgumentException("--engine " + spec + " names " + all.size() + " engines");
        }
        return all.get(0);
    }

    /** The engines of one {@code --engine} spec: one, or one per data-parallel rank. */
    public static List<EngineEndpoint> parseAll(String spec) {
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
        Integer dp = null;
        int dpStart = 0;
        String topic = "";
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i];
            if (p.startsWith("events=tcp://")) {
                events = p.substring("events=".length());
            } else if (p.startsWith("replay=tcp://")) {
                replay = p.substring("replay=".length());
            } else if (p.startsWith("topic=")) {
                topic = p.substring("topic=".length()).replace("{host}", url.getHost());
            } else if (p.startsWith("dp=")) {
                dp = number(spec, p, 1, 1024);
            } else if (p.startsWith("dp-start=")) {
                dpStart = number(spec, p, 0, 65535);
            } else {
                throw new IllegalArgumentException("--engine " + spec + ": " + p + " is none of events=tcp://HOST:PORT,"
                        + " replay=tcp://HOST:PORT, topic=T, dp=N, dp-start=R");
            }
        }
        if (!topic.isEmpty() && events == null) {
            throw new IllegalArgumentException("--engine " + spec + ": topic= needs events= too");
        }
        if (replay != null && events == null) {
            throw new IllegalArgumentException("--engine " + spec + ": replay= needs events= too");
        }
        if (dp == null && dpStart != 0) {
            throw new IllegalArgumentException("--engine " + spec + ": dp-start= needs dp= too");
        }
        int eventsPort = events == null ? -1 : port(spec, events);
        int replayPort = replay == null ? -1 : port(spec, replay);
        boolean bind = events != null && hostOf(events).equals("*");
        if (replay != null && hostOf(replay).equals("*")) {
            throw new IllegalArgumentException("--engine " + spec + ": replay= names the engine's host (the engine "
                    + "binds its replay socket; only events= may be * for the router to bind)");
        }
        String id = url.getHost() + ":" + url.getPort();
        if (dp == null) {
            return List.of(new EngineEndpoint(id, url, events, replay, null, bind, topic));
        }
        List<EngineEndpoint> out = new ArrayList<>(dp);
        for (int r = dpStart; r < dpStart + dp; r++) {
            if (eventsPort + r > 65535 || replayPort + r > 65535) {
                throw new IllegalArgumentException("--engine " + spec + ": rank " + r + "'s port is past 65535");
            }
            out.add(new EngineEndpoint(id + "/dp" + r, url, events == null ? null : withPort(events, eventsPort + r),
                    replay == null ? null : withPort(replay, replayPort + r), r, bind, topic));
        }
        return out;
    }

    private static int number(String spec, String part, int min, int max) {
        String v = part.substring(part.indexOf('=') + 1);
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("--engine " + spec + ": " + part + " is not a number from " + min + " to "
                + max);
    }

    private static String hostOf(String endpoint) {
        String rest = endpoint.substring("tcp://".length());
        return rest.substring(0, Math.max(0, rest.lastIndexOf(':')));
    }

    private static int port(String spec, String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        try {
            int p = Integer.parseInt(endpoint.substring(colon + 1));
            if (colon > "tcp://".length() && p > 0 && p < 65536) {
                return p;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException("--engine " + spec + ": " + endpoint + " is not tcp://HOST:PORT");
    }

    private static String withPort(String endpoint, int port) {
        return endpoint.substring(0, endpoint.lastIndexOf(':') + 1) + port;
    }
}
