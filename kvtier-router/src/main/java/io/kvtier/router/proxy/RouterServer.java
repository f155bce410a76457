package io.kvtier.router.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvtier.router.http.OpenAiReplies;
import io.kvtier.router.map.KvCacheMap;
import io.kvtier.router.tokens.ChatTemplate;
import io.kvtier.router.tokens.TokenIds;
import io.kvtier.router.tokens.Tokenizer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * The OpenAI-compatible proxy in front of the engines.
 *
 * A completion request is read whole (bounded by --max-body), its prompt turned into token ids (ids given are used
 * as they are; text through the tokenizer; chat messages through the chat template first), and the policy orders the
 * healthy engines serving its model. The request's bytes go to the first engine unchanged, and the engine's answer
 * comes back unchanged, byte for byte as it arrives (an SSE stream is flushed chunk by chunk, never buffered).
 *
 * Failures. An engine that refuses the connection, fails before its answer's first byte, or answers 5xx before any
 * byte went to the client is reported down (the fleet skips it until a probe succeeds) and the next engine is tried,
 * up to --attempts. Once a byte went to the client nothing is retried: a stream cut mid-way is cut for the client too.
 * Every request is bounded by --request-timeout, streamed or not: at the deadline the upstream and the client
 * connection are closed.
 */

/** The router's HTTP front: OpenAI completions proxied by policy, /v1/models, /health, /metrics, /v1/kv/lookup. */
public final class RouterServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RouterServer.class);
    private static final ObjectMapper JSON = new ObjectMapper();


    /**
     * The JDK server's own bounds, set before it starts: a client slower than this to send its request, or to take
     * its answer, loses its connection; and at most this many connections at once.
     */
    private static void bound(RouterOptions options) {
        long seconds = Math.max(1, options.requestTimeout().toSeconds() + 1);
        System.setProperty("sun.net.httpserver.maxReqTime", Long.toString(seconds));
        System.setProperty("sun.net.httpserver.maxRspTime", Long.toString(seconds));
        System.setProperty("jdk.httpserver.maxConnections", "4096");
    }

    private final RouterOptions options;
    private final Fleet fleet;
    private final Policy policy;
    private final Tokenizer tokenizer;
    private final ChatTemplate chatTemplate;
    private final RouterMetrics metrics;
    private final HttpServer server;
    private final HttpClient upstream;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final ScheduledExecutorService deadlines = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("router-deadlines").factory());

    public RouterServer(RouterOptions options, Fleet fleet, Policy policy, Tokenizer tokenizer,
                        ChatTemplate chatTemplate) throws IOException {
        this.options = options;
        this.fleet = fleet;
        this.policy = policy;
        this.tokenizer = tokenizer;
        this.chatTemplate = chatTemplate;
        this.metrics = new RouterMetrics(options.policy(), fleet);
        this.upstream = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(threads)
                .connectTimeout(options.probeTimeout()).build();
        bound(options);
        OpenAiReplies.noDelay();
        server = HttpServer.create(new InetSocketAddress(options.host(), options.port()), 1024);
        server.setExecutor(threads);
        handle("/v1/completions", x -> proxy(x, Kind.COMPLETION));
        handle("/v1/chat/completions", x -> proxy(x, Kind.CHAT));
        for (String path : PASSED_THROUGH) {
            handle(path, x -> proxy(x, Kind.OTHER));
        }
        handle("/", x -> OpenAiReplies.error(x, 404, "no route " + x.getRequestMethod() + " "
                + x.getRequestURI().getRawPath() + " on the router"));
        handle("/v1/models", this::models);
        handle("/v1/kv/lookup", this::lookup);
        handle("/v1/kv/map", this::map);
        handle("/health", this::health);
        handle("/metrics", x -> OpenAiReplies.reply(x, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.scrape()));
        server.start();
        log.info("router on http://{}:{} ({} engines, policy {})", options.host(), port(), options.engines().size(),
                options.policy());
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Serves {@code path}; whatever a handler throws is logged, answered 500 where nothing was sent, and closed. */
    private void handle(String path, com.sun.net.httpserver.HttpHandler handler) {
        server.createContext(path, x -> {
            try {
                handler.handle(x);
            } catch (IOException e) {
                log.debug("{} {}: {}", x.getRequestMethod(), path, e.toString());
            } catch (RuntimeException e) {
                log.error("{} {} failed", x.getRequestMethod(), path, e);
                if (x.getResponseCode() < 0) {
                    try {
                        OpenAiReplies.error(x, 500, "internal error: " + e);
                    } catch (IOException ignored) {
                        // the client is gone; closing below is all that is left
                    }
                }
            } finally {
                x.close();
            }
        });
    }

    /** What a POST asks for: a completion (prompt scored), a chat completion (messages scored), or anything else. */
    private enum Kind { COMPLETION, CHAT, OTHER }

    /**
     * vLLM's other POST endpoints, passed to an engine serving the request's model (the only model served where the
     * request names none, as vLLM defaults it), chosen by load: nothing in them is a prefix the map can score.
     */
    static final List<String> PASSED_THROUGH = List.of("/v1/embeddings", "/v1/responses", "/tokenize", "/detokenize",
            "/pooling", "/classify", "/score", "/v1/score", "/rerank", "/v1/rerank", "/v2/rerank");

    /** What a completion request asks: its model and prompt tokens (null: none the router can score). */
    private record Parsed(String model, int[] tokens) {
    }

    private void proxy(HttpExchange x, Kind kind) throws IOException {
        long deadline = System.nanoTime() + options.requestTimeout().toNanos();
        try (x) {
            if (!x.getRequestMethod().equals("POST")) {
                OpenAiReplies.error(x, 405, "use POST");
                return;
            }
            byte[] body = readBounded(x);
            if (body == null) {
                return;
            }
            Parsed p;
            try {
                p = parse(JSON.readTree(body), kind);
            } catch (IOException | IllegalArgumentException e) {
                OpenAiReplies.error(x, 400, e.getMessage());
                return;
            }
            List<EngineState> engines = fleet.serving(p.model());
            if (engines.isEmpty()) {
                boolean known = fleet.engines().stream().anyMatch(e -> p.model().equals(e.model()));
                OpenAiReplies.error(x, known ? 503 : 404, known ? "no healthy engine serves " + p.model()
                        : "The model `" + p.model() + "` does not exist.");
                return;
            }
            int[] tokens = p.tokens() == null ? new int[0] : p.tokens();
            Policy.Choice choice = policy.choose(p.model(), null, tokens, engines);
            metrics.decided(choice.reason());
            StorePrefetch prefetch = fleet.storePrefetch();
            if (prefetch != null) {
                prefetch.send(choice.prefetch()); // in the background, while the request goes to its engine
            }
            forward(x, body, p, tokens, choice, deadline);
        }
    }

    private Parsed parse(JsonNode body, Kind kind) {
        if (body == null || !body.isObject()) {
            throw new IllegalArgumentException("the body is not a JSON object");
        }
        String model = body.path("model").asText("");
        if (model.isEmpty() && kind == Kind.OTHER) {
            java.util.Set<String> served = new java.util.TreeSet<>();
            fleet.engines().stream().filter(e -> e.model() != null).forEach(e -> served.add(e.model()));
            if (served.size() == 1) {
                return new Parsed(served.iterator().next(), null);
            }
        }
        if (model.isEmpty()) {
            throw new IllegalArgumentException("the request names no model");
        }
        if (kind == Kind.OTHER) {
            return new Parsed(model, null);
        }
        if (kind == Kind.CHAT) {
            return new Parsed(model, tokenizer.encode(chatTemplate.render(body), false));
        }
        JsonNode prompt = body.path("prompt");
        if (prompt.isTextual()) {
            return new Parsed(model, tokenizer.encode(prompt.asText()));
        }
        if (TokenIds.isIdList(prompt)) {
            return new Parsed(model, TokenIds.of(prompt));
        }
        return new Parsed(model, null); // a batch of prompts: routed by load, the engine judges it
    }

    /**
     * Tries the engines in the policy's order until one answers. Only failures before the answer's first byte reached
     * the client are retried, and only a failure to connect marks an engine down (a reset or a slow answer may be the
     * request's own doing, and the probes judge the engine); a client that hangs up ends the request, nothing else.
     */
    private void forward(HttpExchange x, byte[] body, Parsed p, int[] tokens, Policy.Choice choice, long deadline)
            throws IOException {
        int attempts = Math.min(options.maxAttempts(), choice.order().size());
        String last = "no engine";
        for (int a = 0; a < attempts; a++) {
            EngineState e = choice.order().get(a);
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            e.inFlight.incrementAndGet();
            e.activeTokens.addAndGet(tokens == null ? 0 : tokens.length);
            e.requests.incrementAndGet();
            PendingPrefill pending = new PendingPrefill(e, tokens == null ? 0
                    : a == 0 ? choice.computeTokens(tokens.length) : tokens.length,
                    a == 0 ? Math.round(choice.loadSeconds() * 1e9) : 0);
            long sent = System.nanoTime();
            try {
                HttpResponse<InputStream> r;
                try {
                    r = send(e, x, body, left);
                } catch (java.net.ConnectException | java.net.http.HttpConnectTimeoutException ex) {
                    last = e.id() + ": " + ex;
                    fleet.failed(e, ex.toString());
                    metrics.outcome(e.id(), "retried");
                    continue;
                } catch (java.net.http.HttpTimeoutException ex) {
                    last = e.id() + " did not answer within the request timeout"; // slow, not dead; too late to retry
                    metrics.outcome(e.id(), "timeout");
                    break;
                } catch (IOException ex) {
                    last = e.id() + ": " + ex;
                    metrics.outcome(e.id(), "retried");
                    continue;
                }
                if (r.statusCode() >= 500 && a + 1 < attempts) {
                    r.body().close();
                    last = e.id() + " answered " + r.statusCode();
                    metrics.outcome(e.id(), "retried");
                    continue;
                }
                boolean complete = relay(x, r, deadline, a == 0 ? choice.predictedCachedTokens() : 0, pending);
                if (Policy.DECISIONS.isDebugEnabled()) {
                    Policy.DECISIONS.debug("prompt {} ({} tokens) to {} ({}, attempt {}): first byte after {} ms,"
                                    + " expected to compute {} and load {} ms", Policy.fingerprint(tokens),
                            tokens.length, e.id(), choice.reason(), a + 1, pending.firstByteMillis(sent),
                            choice.computeTokens(tokens.length), Math.round(choice.loadSeconds() * 1e3));
                }
                metrics.outcome(e.id(), !complete ? "cut" : r.statusCode() < 400 ? "ok" : "error");
                if (complete && r.statusCode() < 400) {
                    policy.routed(p.model(), null, tokens, e);
                }
                return; // a byte went to the client (or it hung up): never retried
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                pending.answered();
                e.inFlight.decrementAndGet();
                e.activeTokens.addAndGet(tokens == null ? 0 : -tokens.length);
            }
        }
        OpenAiReplies.error(x, System.nanoTime() - deadline >= 0 ? 504 : 502, "no engine answered: " + last);
    }

    /**
     * One request's share of an engine's pending work (tokens to prefill, nanoseconds of loads): added when it is
     * sent, taken back once, at the answer's first byte (a streamed answer's first token: its loads and prefill are
     * done) or when the attempt ends, whichever is first.
     */
    private static final class PendingPrefill {
        private final EngineState engine;
        private long tokens;
        private long loadNanos;

        PendingPrefill(EngineState engine, long tokens, long loadNanos) {
            this.engine = engine;
            this.tokens = tokens;
            this.loadNanos = loadNanos;
            engine.pendingPrefill.addAndGet(tokens);
            engine.pendingLoadNanos.addAndGet(loadNanos);
        }

        private long answeredNanos;

        /** Milliseconds from {@code sentNanos} to the answer's first byte; -1 if none came. */
        long firstByteMillis(long sentNanos) {
            return answeredNanos == 0 ? -1 : (answeredNanos - sentNanos) / 1_000_000;
        }

        /** Called by the request's own thread only. */
        void answered() {
            if (answeredNanos == 0) {
                answeredNanos = System.nanoTime();
            }
            if (tokens != 0 || loadNanos != 0) {
                engine.pendingPrefill.addAndGet(-tokens);
                engine.pendingLoadNanos.addAndGet(-loadNanos);
                tokens = 0;
                loadNanos = 0;
            }
        }
    }

    private HttpResponse<InputStream> send(EngineState e, HttpExchange x, byte[] body, long leftNanos)
            throws IOException, InterruptedException {
        String query = x.getRequestURI().getRawQuery();
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(e.endpoint.url() + x.getRequestURI().getRawPath()
                        + (query == null ? "" : "?" + query)))
                .timeout(java.time.Duration.ofNanos(leftNanos))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Content-Type", "application/json");
        String auth = x.getRequestHeaders().getFirst("Authorization");
        if (auth != null) {
            b.header("Authorization", auth);
        }
        if (e.endpoint.dpRank() != null) {
            b.header("X-data-parallel-rank", Integer.toString(e.endpoint.dpRank())); // vLLM's rank selector
        }
        return upstream.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    }

    /**
     * Copies the engine's answer to the client as it arrives, until the request's deadline; false if it was cut (the
     * deadline, the engine's stream failing, or the client hanging up). The upstream stream is closed on every path.
     */
    private boolean relay(HttpExchange x, HttpResponse<InputStream> r, long deadline, int predicted,
                          PendingPrefill pending) {
        String type = r.headers().firstValue("Content-Type").orElse("application/json");
        boolean keep = type.startsWith("application/json");
        ByteArrayOutputStream copy = keep ? new ByteArrayOutputStream() : null;
        java.util.concurrent.atomic.AtomicBoolean cutOff = new java.util.concurrent.atomic.AtomicBoolean();
        try (InputStream in = r.body()) {
            // At the deadline the upstream is closed, which ends the copy below; on a thread of its own, so that one
            // client that stopped reading never delays another's deadline.
            ScheduledFuture<?> cut = deadlines.schedule(() -> Thread.ofVirtual().start(() -> {
                cutOff.set(true);
                closeQuietly(in);
            }), Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            try {
                x.getResponseHeaders().set("Content-Type", type);
                x.sendResponseHeaders(r.statusCode(), 0);
                OutputStream out = x.getResponseBody();
                byte[] buffer = new byte[16 * 1024];
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    pending.answered();
                    out.write(buffer, 0, n);
                    out.flush();
                    if (copy != null && copy.size() < (1 << 20)) {
                        copy.write(buffer, 0, n);
                    }
                }
            } finally {
                cut.cancel(false);
            }
        } catch (IOException e) {
            log.debug("answer cut: {}", cutOff.get() ? "the request's deadline" : e.toString());
            return false;
        }
        if (cutOff.get()) {
            return false;
        }
        if (copy != null) {
            metrics.cached(predicted, cachedTokens(copy.toByteArray()));
        }
        return true;
    }

    /** vLLM's usage.prompt_tokens_details.cached_tokens of a JSON answer; -1 where it has none. */
    private static int cachedTokens(byte[] answer) {
        try {
            JsonNode n = JSON.readTree(answer).path("usage").path("prompt_tokens_details").path("cached_tokens");
            return n.isInt() ? n.asInt() : -1;
        } catch (IOException e) {
            return -1;
        }
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // closing is all that is left to do
        }
    }

    private void models(HttpExchange x) throws IOException {
        try (x) {
            ObjectNode o = JSON.createObjectNode().put("object", "list");
            ArrayNode data = o.putArray("data");
            TreeSet<String> models = new TreeSet<>();
            fleet.engines().stream().filter(EngineState::healthy).forEach(e -> models.add(e.model()));
            models.forEach(m -> data.addObject().put("id", m).put("object", "model").put("owned_by", "kvtier-router"));
            OpenAiReplies.reply(x, 200, "application/json", JSON.writeValueAsString(o));
        }
    }

    private void health(HttpExchange x) throws IOException {
        try (x) {
            long up = fleet.engines().stream().filter(EngineState::healthy).count();
            OpenAiReplies.reply(x, up > 0 ? 200 : 503, "text/plain", up + " of " + fleet.engines().size() + " engines healthy\n");
        }
    }

    /**
     * {@code GET /v1/kv/map}: the whole map in figures (what {@code kvtier map} shows): per engine its health, model,
     * load, blocks per medium and its event stream's counters; per kvtier node its chunks per tier and its stream's.
     */
    private void map(HttpExchange x) throws IOException {
        try (x) {
            ObjectNode o = JSON.createObjectNode().put("policy", options.policy());
            Map<String, KvCacheMap.EngineStats> blocks = new java.util.HashMap<>();
            fleet.map().stats().forEach(st -> blocks.put(st.engine(), st));
            Map<String, io.kvtier.events.EventSubscriber.Stats> events = fleet.eventStats();
            ArrayNode engines = o.putArray("engines");
            for (EngineState e : fleet.engines()) {
                ObjectNode n = engines.addObject().put("engine", e.id()).put("model", e.model())
                        .put("healthy", e.healthy()).put("load", e.load());
                KvCacheMap.EngineStats st = blocks.get(e.id());
                ObjectNode media = n.putObject("blocks");
                if (st != null) {
                    n.put("block_size", st.blockSize()).put("remote_blocks", st.remote());
                    st.blocksByMedium().forEach(media::put);
                }
                eventFigures(n, events.get(e.id()), e.endpoint.events() != null);
            }
            StoreFeeds store = fleet.store();
            if (store != null) {
                ArrayNode nodes = o.putObject("store").put("chunk_tokens", options.lmcache().chunkSize())
                        .putArray("nodes");
                Map<String, io.kvtier.events.EventSubscriber.Stats> storeEvents = store.eventStats();
                for (io.kvtier.router.map.StoreMap.NodeStats st : store.map().stats()) {
                    ObjectNode n = nodes.addObject().put("node", st.node()).put("memory_chunks", st.memoryChunks())
                            .put("disk_chunks", st.diskChunks()).put("lag_seconds", st.lagSeconds());
                    ObjectNode bw = n.putObject("fetch_bytes_per_second");
                    FetchProbes probes = fleet.fetchProbes();
                    for (io.kvtier.events.StoreEvent.Tier tier : io.kvtier.events.StoreEvent.Tier.values()) {
                        double v = probes == null ? Double.NaN : probes.bytesPerSecond(st.node(), tier);
                        String name = tier.name().toLowerCase(java.util.Locale.ROOT);
                        if (v > 0) {
                            bw.put(name, v);
                        } else {
                            bw.putNull(name);
                        }
                    }
                    eventFigures(n, storeEvents.get(st.node()), true);
                }
            }
            OpenAiReplies.reply(x, 200, "application/json", JSON.writeValueAsString(o));
        }
    }

    private static void eventFigures(ObjectNode n, io.kvtier.events.EventSubscriber.Stats s, boolean followed) {
        if (s == null) {
            n.putNull("events");
            n.put("events_followed", followed);
            return;
        }
        n.put("events_followed", true);
        n.putObject("events").put("batches", s.batches()).put("gaps", s.gaps()).put("replayed", s.replayed())
                .put("resyncs", s.resyncs()).put("malformed", s.malformed()).put("snapshots", s.snapshots())
                .put("heartbeats", s.heartbeats());
    }

    /** {@code POST /v1/kv/lookup {model, prompt | token_ids}}: per engine, the prompt tokens it holds per medium. */
    private void lookup(HttpExchange x) throws IOException {
        try (x) {
            byte[] body = readBounded(x);
            if (body == null) {
                return;
            }
            int[] tokens;
            String model;
            try {
                JsonNode q = JSON.readTree(body);
                model = q.path("model").asText("");
                JsonNode ids = q.path("token_ids");
                if (model.isEmpty()) {
                    throw new IllegalArgumentException("the lookup names no model");
                }
                if (ids.isArray()) {
                    tokens = TokenIds.of(ids);
                } else if (q.path("prompt").isTextual()) {
                    tokens = tokenizer.encode(q.path("prompt").asText());
                } else if (q.has("messages")) {
                    tokens = tokenizer.encode(chatTemplate.render(q), false);
                } else {
                    throw new IllegalArgumentException("give prompt (text), messages (chat) or token_ids");
                }
            } catch (IOException | IllegalArgumentException e) {
                OpenAiReplies.error(x, 400, e.getMessage());
                return;
            }
            ObjectNode o = JSON.createObjectNode().put("model", model).put("prompt_tokens", tokens.length);
            ArrayNode engines = o.putArray("engines");
            for (KvCacheMap.EnginePrefix p : fleet.map().lookup(model, null, tokens)) {
                ObjectNode e = engines.addObject().put("engine", p.engine()).put("block_size", p.blockSize());
                ObjectNode media = e.putObject("tokens");
                p.tokensByMedium().forEach(media::put);
            }
            StoreFeeds store = fleet.store();
            if (store != null) {
                storePrefix(o.putObject("store"), store.map().lookup(options.lmcache().keys(model, tokens)));
            }
            OpenAiReplies.reply(x, 200, "application/json", JSON.writeValueAsString(o));
        }
    }

    /**
     * The prompt's leading chunks kvtier holds: their tokens in all, in memory and on disk, and per node (in a cluster a
     * prompt's chunks are spread over the nodes owning their slots).
     */
    private void storePrefix(ObjectNode o, List<io.kvtier.router.map.StoreMap.Held> held) {
        int chunk = options.lmcache().chunkSize();
        Map<String, int[]> perNode = new java.util.TreeMap<>();
        int memory = 0;
        long bytes = 0;
        for (io.kvtier.router.map.StoreMap.Held h : held) {
            boolean inMemory = h.tier() == io.kvtier.events.StoreEvent.Tier.MEMORY;
            memory += inMemory ? chunk : 0;
            bytes += h.bytes();
            perNode.computeIfAbsent(h.node(), n -> new int[2])[inMemory ? 0 : 1] += chunk;
        }
        o.put("chunk_tokens", chunk).put("tokens", held.size() * chunk).put("memory_tokens", memory)
                .put("disk_tokens", held.size() * chunk - memory).put("bytes", bytes);
        ArrayNode nodes = o.putArray("nodes");
        perNode.forEach((node, t) -> nodes.addObject().put("node", node).put("memory_tokens", t[0])
                .put("disk_tokens", t[1]));
    }

    /** The request body, or null after answering 413 where it is over --max-body. */
    private byte[] readBounded(HttpExchange x) throws IOException {
        InputStream in = x.getRequestBody();
        byte[] body = in.readNBytes(options.maxBodyBytes() + 1);
        if (body.length > options.maxBodyBytes()) {
            OpenAiReplies.error(x, 413, "the request body is over " + options.maxBodyBytes() + " bytes");
            return null;
        }
        return body;
    }


    @Override
    public void close() {
        server.stop(0);
        deadlines.shutdownNow();
        threads.shutdownNow();
    }
}
