package io.kvtier.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvtier.events.EventPublisher;
import io.kvtier.router.http.OpenAiReplies;
import io.kvtier.router.events.KvEvent;
import io.kvtier.router.events.KvEventBatch;
import io.kvtier.router.events.Layout;
import io.kvtier.router.events.VllmEventCodec;
import io.kvtier.router.tokens.ChatTemplate;
import io.kvtier.router.tokens.TokenIds;
import io.kvtier.router.tokens.Tokenizer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * An emulated vLLM engine: the OpenAI API vLLM serves, the KV events vLLM publishes (byte for byte, over ZMQ), the
 * /metrics a router reads load from, and behind them vLLM's engine core as a model: a continuous-batching scheduler
 * (Scheduler) over a GPU block pool with prefix caching (BlockPool), stepping in real time, each step as long as a
 * cost model says (Roofline for a GPU and a model; StepCost.perToken for the routing tests), and optionally an
 * LMCache-like connector that stores and loads real chunk bytes in kvtier (KvConnector). No model runs; the answer's
 * text is filler.
 *
 * One platform thread per engine runs the steps: take new requests, schedule, load what the connector found (real
 * transfers; the step waits, or with LoadMode.LAYERWISE overlaps them layer by layer, or with LoadMode.ASYNC the
 * request waits off the batch while its load runs on another thread), sleep the step's modeled compute time, then apply it (tokens to the requests, KV events
 * out, new chunks queued for storing). HTTP requests run on virtual threads that hand a request to the step thread and
 * wait for its tokens; a streaming request gets one SSE event per token, or several tokens in one event when its
 * writer falls behind, as vLLM's API server does. Everything a client, a router or kvtier sees is real (HTTP, SSE, ZMQ,
 * msgpack, RESP, chunk bytes); only the GPU's time is modeled. docs/fleet.md describes the model and its calibration.
 */

/** An emulated vLLM engine serving the OpenAI API; thread-safe, one virtual thread per request. */
public final class EngineSim implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EngineSim.class);
    private static final ObjectMapper JSON = new ObjectMapper();


    private final EngineSimOptions options;
    private final Tokenizer tokenizer;
    private final ChatTemplate chatTemplate;
    private final HttpServer http;
    private final ExecutorService requests = Executors.newVirtualThreadPerTaskExecutor();
    private final EventPublisher events;
    private final BlockPool pool;
    private final Scheduler scheduler;
    private final ChunkOffload connector;
    private final LoadMode loadMode;
    /** ASYNC: loads running off the batch, and those done, with the time the model says they are done. */
    private final java.util.concurrent.ExecutorService loaders = Executors.newCachedThreadPool(
            Thread.ofPlatform().daemon().name("engine-sim-loads-", 0).factory());
    private final java.util.concurrent.ConcurrentLinkedQueue<LoadDone> loadsDone =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.List<LoadDone> loadsDueLater = new java.util.ArrayList<>();
    private final java.util.concurrent.LinkedBlockingQueue<Object> inbox = new java.util.concurrent.LinkedBlockingQueue<>();
    private final Thread stepper;
    private volatile boolean closed;
    private final AtomicLong ids = new AtomicLong();
    private volatile Gauges gauges = new Gauges(0, 0, 0);
    private volatile EngineStats stats = new EngineStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    private long steps;
    private long busyNanos;
    private long loadNanos;
    private long lagNanos;

    private record Gauges(int running, int waiting, double usage) {
    }

    /** An asynchronous load's outcome, due at {@code dueNanos} (its real time scaled to the real bytes' time). */
    private record LoadDone(SimRequest request, boolean ok, long beginNanos, long dueNanos) {
    }

    public EngineSim(EngineSimOptions options, Tokenizer tokenizer, ChatTemplate chatTemplate) throws IOException {
        this.options = options;
        this.tokenizer = tokenizer;
        this.chatTemplate = chatTemplate;
        this.pool = new BlockPool(options.gpuBlocks(), options.blockSize(), new java.security.SecureRandom().nextLong());
        this.connector = options.offload() == null ? null : connect(options.offload());
        this.loadMode = options.offload() == null ? LoadMode.SYNC : options.offload().loadMode();
        this.scheduler = new Scheduler(pool, options.maxSeqs(), options.maxBatchedTokens(), connector,
                loadMode == LoadMode.ASYNC);
        this.events = new EventPublisher(options.eventsConnect() != null ? options.eventsConnect()
                : "tcp://" + options.host() + ":" + options.eventsPort(),
                options.replayPort() < 0 ? null : "tcp://" + options.host() + ":" + options.replayPort(),
                options.topic(), options.layout() == Layout.MAP_V0_26, options.replayBuffer(), null, null,
                options.eventsConnect() != null);
        OpenAiReplies.noDelay();
        this.http = HttpServer.create(new InetSocketAddress(options.host(), options.port()), 256);
        http.setExecutor(requests);
        http.createContext("/v1/completions", x -> serve(x, false));
        http.createContext("/v1/chat/completions", x -> serve(x, true));
        http.createContext("/v1/models", this::models);
        http.createContext("/tokenize", this::tokenize);
        http.createContext("/health", x -> OpenAiReplies.reply(x, 200, "text/plain", ""));
        http.createContext("/metrics", this::metrics);
        this.stepper = Thread.ofPlatform().name("engine-sim-steps-" + options.port()).daemon().start(this::steps);
        http.start();
        log.info("engine-sim {} on http://{}:{} (events tcp://{}:{}{}), {} blocks of {} tokens, {}{}", options.model(),
                options.host(), port(), options.host(), events.port(),
                events.replayPort() < 0 ? "" : ", replay " + events.replayPort(), options.gpuBlocks(),
                options.blockSize(), options.cost().describe(), options.offload() == null ? ""
                        : options.offload().localCpuBytes() > 0 ? ", offload to its own CPU memory ("
                        + options.offload().localCpuBytes() + " bytes at " + options.offload().hostBytesPerSecond()
                        + " B/s), " + options.offload().loadMode().label()
                        : ", offload to kvtier at " + options.offload().kvtier() + ", "
                        + options.offload().loadMode().label());
    }

    private static ChunkOffload connect(EngineSimOptions.Offload o) throws IOException {
        List<io.kvtier.kvcache.key.LmcacheChunkKeys> workers = new java.util.ArrayList<>();
        var hash = io.kvtier.kvcache.key.LmcacheChunkKeys.Algorithm.BUILTIN;
        for (int w = 0; w < o.tp(); w++) {
            workers.add(new io.kvtier.kvcache.key.LmcacheChunkKeys(o.lmcacheModel(), o.tp(), w, o.dtype(),
                    o.chunkTokens(), hash, hash.seedZeroNoneHash()));
        }
        if (o.localCpuBytes() > 0) {
            return new LocalCpuCache(workers, o.chunkBytes(), o.localCpuBytes(), o.hostBytesPerSecond(),
                    o.bytesScale());
        }
        KvtierLink link = KvtierLink.open(o.kvtier(), o.cluster(), o.connections(), o.timeout());
        long chunkBytes = Math.max(1024, Math.round(o.chunkBytes() * o.bytesScale()));
        java.util.function.Function<byte[], SharedMemoryLanes> shm = !o.sharedMemory() ? null : body -> {
            try {
                return new SharedMemoryLanes(o.kvtier(), o.connections(), (int) chunkBytes, body, o.timeout());
            } catch (IOException e) {
                link.close();
                throw new java.io.UncheckedIOException(e);
            }
        };
        try {
            return new KvConnector(link, workers, chunkBytes, Math.max(chunkBytes * o.tp(),
                    Math.round(o.bufferBytes() * o.bytesScale())), o.timeout().toMillis(), shm, o.bytesScale());
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
    }

    public int port() {
        return http.getAddress().getPort();
    }

    public int eventsPort() {
        return events.port();
    }

    public int replayPort() {
        return events.replayPort();
    }

    private void serve(HttpExchange x, boolean chat) throws IOException {
        try (x) {
            JsonNode body = postedJson(x);
            if (body == null) {
                return;
            }
            int[] prompt;
            try {
                prompt = chat ? tokenizer.encode(chatTemplate.render(body), false) : promptOf(body);
            } catch (IllegalArgumentException e) {
                OpenAiReplies.error(x, 400, e.getMessage());
                return;
            }
            if (!body.path("model").asText(options.model()).equals(options.model())) {
                OpenAiReplies.error(x, 404, "The model `" + body.path("model").asText() + "` does not exist.");
                return;
            }
            int maxTokens = body.path(chat && body.has("max_completion_tokens") ? "max_completion_tokens"
                    : "max_tokens").asInt(16);
            if (maxTokens < 1 || prompt.length == 0) {
                OpenAiReplies.error(x, 400, maxTokens < 1 ? "max_tokens must be at least 1" : "the prompt is empty");
                return;
            }
            long context = (long) options.gpuBlocks() * options.blockSize();
            if (prompt.length + (long) maxTokens > context) {
                OpenAiReplies.error(x, 400, "This model's maximum context length is " + context + " tokens; the prompt ("
                        + prompt.length + " tokens) and max_tokens (" + maxTokens + ") are longer than that.");
                return;
            }
            run(x, chat, body.path("stream").asBoolean(false),
                    body.path("stream_options").path("include_usage").asBoolean(false), prompt, maxTokens);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * vLLM's {@code POST /tokenize}: {@code prompt} (special tokens added unless {@code add_special_tokens} is false)
     * or {@code messages} (the chat template rendered; no special tokens unless asked), answered with {@code count},
     * {@code max_model_len}, {@code tokens} and {@code token_strs} (null).
     */
    private void tokenize(HttpExchange x) throws IOException {
        try (x) {
            JsonNode body = postedJson(x);
            if (body == null) {
                return;
            }
            if (!body.path("model").asText(options.model()).equals(options.model())) {
                OpenAiReplies.error(x, 404, "The model `" + body.path("model").asText() + "` does not exist.");
                return;
            }
            int[] tokens;
            try {
                if (body.has("messages")) {
                    tokens = tokenizer.encode(chatTemplate.render(body),
                            body.path("add_special_tokens").asBoolean(false));
                } else if (body.path("prompt").isTextual()) {
                    tokens = tokenizer.encode(body.path("prompt").asText(),
                            body.path("add_special_tokens").asBoolean(true));
                } else {
                    throw new IllegalArgumentException("give prompt (a string) or messages");
                }
            } catch (IllegalArgumentException e) {
                OpenAiReplies.error(x, 400, e.getMessage());
                return;
            }
            ObjectNode o = JSON.createObjectNode().put("count", tokens.length)
                    .put("max_model_len", (long) options.gpuBlocks() * options.blockSize());
            ArrayNode ids = o.putArray("tokens");
            for (int t : tokens) {
                ids.add(t);
            }
            o.putNull("token_strs");
            OpenAiReplies.reply(x, 200, "application/json", JSON.writeValueAsString(o));
        }
    }

    /** The JSON body of a POST, or null once a 405 (another method) or a 400 (not JSON) was answered. */
    private static JsonNode postedJson(HttpExchange x) throws IOException {
        if (!x.getRequestMethod().equals("POST")) {
            OpenAiReplies.error(x, 405, "use POST");
            return null;
        }
        try {
            return JSON.readTree(x.getRequestBody());
        } catch (IOException e) {
            OpenAiReplies.error(x, 400, "the body is not JSON: " + e.getMessage());
            return null;
        }
    }

    private int[] promptOf(JsonNode body) {
        JsonNode p = body.path("prompt");
        if (p.isTextual()) {
            return tokenizer.encode(p.asText());
        }
        if (TokenIds.isIdList(p)) {
            return TokenIds.of(p);
        }
        throw new IllegalArgumentException("prompt must be a string or an array of token ids");
    }

    /** Hands the request to the step thread and answers as its tokens come, streaming or not. */
    private void run(HttpExchange x, boolean chat, boolean stream, boolean streamUsage, int[] prompt, int maxTokens)
            throws IOException, InterruptedException {
        Progress progress = new Progress();
        SimRequest r = new SimRequest(ids.incrementAndGet(), prompt, maxTokens, pool.chain(prompt), progress);
        String id = (chat ? "chatcmpl-" : "cmpl-") + Long.toHexString(r.id);
        inbox.add(r);
        if (stream) {
            streamAnswer(x, chat, id, r, progress, streamUsage);
            return;
        }
        String error = progress.awaitEnd();
        if (error != null) {
            OpenAiReplies.error(x, 503, error);
            return;
        }
        OpenAiReplies.reply(x, 200, "application/json", JSON.writeValueAsString(
                completion(chat, id, Filler.text(maxTokens), prompt.length, progress.cached(), maxTokens)));
    }

    /** A request's tokens as the step thread reports them, for the HTTP thread waiting on them. */
    private static final class Progress implements SimRequest.Listener {
        private int generated;
        private int taken;
        private boolean ended;
        private String error;
        private int cached;

        @Override
        public synchronized void prefilled(int cachedTokens) {
            cached = cachedTokens;
        }

        synchronized int cached() {
            return cached;
        }

        @Override
        public synchronized void tokens(int count) {
            generated += count;
            notifyAll();
        }

        @Override
        public synchronized void finished(String why) {
            ended = true;
            error = why;
            notifyAll();
        }

        /** Waits for tokens not yet taken and returns how many (0 once the request has ended without more). */
        synchronized int awaitTokens() throws InterruptedException {
            while (taken == generated && !ended) {
                wait();
            }
            int n = generated - taken;
            taken = generated;
            return n;
        }

        synchronized String awaitEnd() throws InterruptedException {
            while (!ended) {
                wait();
            }
            return error;
        }
    }

    /** The step loop: see the comment at the top. */
    private void steps() {
        Set<SimRequest> failed = new HashSet<>();
        while (!closed) {
            try {
                boolean asyncPending = scheduler.loading() > 0;
                if (asyncPending && scheduler.running() == 0) {
                    // Nothing runs until a load is in (waiting requests, if any, wait for blocks): look every ms.
                    takeFor(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1));
                } else {
                    take(scheduler.running() == 0 && scheduler.waiting() == 0);
                }
                collectLoads();
                Scheduler.Step step = scheduler.schedule();
                gauges = new Gauges(scheduler.running(), scheduler.waiting() + scheduler.loading(), pool.usage());
                if (loadMode == LoadMode.ASYNC) {
                    for (SimRequest r : step.loads()) {
                        startLoad(r);
                    }
                }
                if (step.isEmpty()) {
                    if (scheduler.waiting() > 0 && scheduler.loading() == 0) {
                        take(true); // waiting for blocks that only finishing requests free: none run, so new input
                    }
                    continue;
                }
                long start = System.nanoTime();
                failed.clear();
                long loaded = start;
                if (loadMode != LoadMode.ASYNC) {
                    long modeled = 0; // the loads' time for the real bytes (ChunkOffload.Loaded)
                    for (SimRequest r : step.loads()) {
                        ChunkOffload.Loaded l = connector.load(r.chunkHashes, r.loadFrom, r.loadTo);
                        modeled += l.nanos();
                        if (!l.ok()) {
                            failed.add(r);
                        }
                    }
                    loaded = start + Math.max(modeled, 0);
                }
                long compute = (long) (options.cost().seconds(step.batch()) * 1e9);
                long end = loadMode == LoadMode.LAYERWISE && loaded > start
                        ? start + LoadMode.pipelined(loaded - start, compute, options.offload().layers())
                        : loaded + compute;
                long now;
                while ((now = System.nanoTime()) < end) {
                    java.util.concurrent.locks.LockSupport.parkNanos(end - now);
                }
                steps++;
                busyNanos += compute;
                loadNanos += loaded - start;
                lagNanos += now - end;
                for (SimRequest r : scheduler.complete(step, failed)) {
                    if (connector != null) {
                        connector.store(r.chunkHashes, Math.max(0, r.externalChunks), r.chunkHashes.length);
                    }
                }
                publish();
                snapshot();
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException e) {
                log.error("engine-sim step failed; failing the requests in it", e);
                scheduler.abortAll("engine error: " + e);
            }
        }
        scheduler.abortAll("the engine is shutting down");
    }

    /**
     * ASYNC: loads a request's chunks off the step thread; its outcome is due once the load's real time, scaled to
     * the real bytes' time, has passed since it started.
     */
    private void startLoad(SimRequest r) {
        long begin = System.nanoTime();
        long[] hashes = r.chunkHashes;
        int from = r.loadFrom;
        int to = r.loadTo;
        loaders.execute(() -> {
            ChunkOffload.Loaded l;
            try {
                l = connector.load(hashes, from, to);
            } catch (RuntimeException e) {
                l = new ChunkOffload.Loaded(false, System.nanoTime() - begin);
            }
            loadsDone.add(new LoadDone(r, l.ok(), begin, begin + l.nanos()));
            inbox.offer(NUDGE);
        });
    }

    private static final Runnable NUDGE = () -> { };

    /** ASYNC: hands the scheduler the loads whose time has come; the others wait for theirs. */
    private void collectLoads() {
        for (LoadDone d; (d = loadsDone.poll()) != null; ) {
            loadsDueLater.add(d);
        }
        long now = System.nanoTime();
        for (java.util.Iterator<LoadDone> it = loadsDueLater.iterator(); it.hasNext(); ) {
            LoadDone d = it.next();
            if (now - d.dueNanos() >= 0) {
                it.remove();
                loadNanos += d.dueNanos() - d.beginNanos(); // the load's time, off the batch
                scheduler.loaded(d.request(), d.ok());
            }
        }
    }

    /** Moves what arrives within {@code nanos} from the inbox to the scheduler, without waiting longer. */
    private void takeFor(long nanos) throws InterruptedException {
        Object o = inbox.poll(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        if (o instanceof SimRequest r) {
            scheduler.add(r);
        } else if (o != null) {
            ((Runnable) o).run();
        }
        take(false);
    }

    /** Moves new requests (and other tasks) from the inbox to the scheduler; waits for one first if {@code idle}. */
    private void take(boolean idle) throws InterruptedException {
        Object o = idle ? inbox.take() : inbox.poll();
        while (o != null) {
            if (o instanceof SimRequest r) {
                scheduler.add(r);
            } else {
                ((Runnable) o).run();
            }
            o = inbox.poll();
        }
    }

    /** The scheduler's side of the counters after a step; the offload path's are read live by {@link #stats}. */
    private void snapshot() {
        Scheduler s = scheduler;
        gauges = new Gauges(s.running(), s.waiting(), pool.usage());
        stats = new EngineStats(s.promptTokens, s.gpuHitTokens, s.externalHitTokens, s.prefillTokens, s.preemptions,
                s.finished, 0, 0, 0, 0, 0, steps, busyNanos / 1e9, loadNanos / 1e9, lagNanos / 1e9);
    }

    /** The engine's counters: the scheduler's as of its last step, the offload path's as of now. */
    public EngineStats stats() {
        EngineStats s = stats;
        ChunkOffload c = connector;
        if (c == null) {
            return s;
        }
        return new EngineStats(s.promptTokens(), s.gpuHitTokens(), s.externalHitTokens(), s.prefillTokens(),
                s.preemptions(), s.finished(), c.bytesRead(), c.bytesWritten(), c.storesDropped(), c.storeFailures(),
                c.loadFailures(), s.steps(), s.busySeconds(), s.loadSeconds(), s.lagSeconds());
    }

    private void streamAnswer(HttpExchange x, boolean chat, String id, SimRequest r, Progress progress,
            boolean withUsage) throws IOException, InterruptedException {
        int sent = 0;
        int n = progress.awaitTokens();
        if (n == 0) {
            OpenAiReplies.error(x, 503, progress.awaitEnd());
            return;
        }
        x.getResponseHeaders().set("Content-Type", "text/event-stream");
        x.sendResponseHeaders(200, 0);
        OutputStream out = x.getResponseBody();
        while (n > 0) {
            StringBuilder text = new StringBuilder();
            for (int t = sent; t < sent + n; t++) {
                text.append(Filler.word(t));
            }
            sent += n;
            ObjectNode chunk = JSON.createObjectNode().put("id", id)
                    .put("object", chat ? "chat.completion.chunk" : "text_completion")
                    .put("created", System.currentTimeMillis() / 1000).put("model", options.model());
            ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
            if (chat) {
                choice.putObject("delta").put("content", text.toString());
            } else {
                choice.put("text", text.toString());
            }
            if (sent == r.maxTokens) {
                choice.put("finish_reason", "length");
            } else {
                choice.putNull("finish_reason");
            }
            out.write(("data: " + JSON.writeValueAsString(chunk) + "\n\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            n = progress.awaitTokens();
        }
        String error = progress.awaitEnd();
        if (error != null) { // the stream has started: vLLM ends it with an error event
            out.write(("data: " + JSON.writeValueAsString(JSON.createObjectNode().set("error", JSON.createObjectNode()
                    .put("message", error).put("type", "ServiceUnavailableError").put("code", 503)))
                    + "\n\n").getBytes(StandardCharsets.UTF_8));
        } else if (withUsage) { // vLLM sends usage in a stream only when stream_options.include_usage asks for it
            ObjectNode usage = JSON.createObjectNode().put("id", id).put("model", options.model());
            usage.putArray("choices");
            usage.set("usage", usage(r.prompt.length, progress.cached(), r.maxTokens));
            out.write(("data: " + JSON.writeValueAsString(usage) + "\n\n").getBytes(StandardCharsets.UTF_8));
        }
        out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
    }

    private ObjectNode completion(boolean chat, String id, String text, int prompt, int cached, int maxTokens) {
        ObjectNode o = JSON.createObjectNode().put("id", id).put("object", chat ? "chat.completion" : "text_completion")
                .put("created", System.currentTimeMillis() / 1000).put("model", options.model());
        ObjectNode choice = o.putArray("choices").addObject().put("index", 0);
        if (chat) {
            choice.putObject("message").put("role", "assistant").put("content", text);
        } else {
            choice.put("text", text);
        }
        choice.put("finish_reason", "length");
        o.set("usage", usage(prompt, cached, maxTokens));
        return o;
    }

    /** vLLM's usage, with the prompt tokens served from its prefix cache (prompt_tokens_details.cached_tokens). */
    private static ObjectNode usage(int prompt, int cached, int completion) {
        ObjectNode u = JSON.createObjectNode().put("prompt_tokens", prompt).put("completion_tokens", completion)
                .put("total_tokens", prompt + completion);
        u.putObject("prompt_tokens_details").put("cached_tokens", cached);
        return u;
    }

    /** Publishes the step's KV events, one batch (step thread only). */
    private void publish() {
        List<KvEvent> batch = pool.drainEvents();
        if (!batch.isEmpty()) {
            events.publish(VllmEventCodec.encode(new KvEventBatch(System.currentTimeMillis() / 1000.0, batch, 0L),
                    options.layout()));
        }
    }

    private void models(HttpExchange x) throws IOException {
        try (x) {
            ObjectNode o = JSON.createObjectNode().put("object", "list");
            ArrayNode data = o.putArray("data");
            data.addObject().put("id", options.model()).put("object", "model").put("owned_by", "kvtier-engine-sim")
                    .put("max_model_len", options.gpuBlocks() * options.blockSize());
            OpenAiReplies.reply(x, 200, "application/json", JSON.writeValueAsString(o));
        }
    }

    /** The vLLM metrics a router reads load from (Prometheus text format, vLLM's names and model_name label). */
    private void metrics(HttpExchange x) throws IOException {
        try (x) {
            Gauges g = gauges;
            EngineStats st = stats();
            int r = g.running();
            int w = g.waiting();
            double usage = g.usage();
            String label = "{model_name=\"" + options.model() + "\"}";
            String text = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running" + label + " " + r + "\n"
                    + "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting" + label + " " + w + "\n"
                    + "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc" + label + " " + usage + "\n"
                    + "# TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total" + label + " "
                    + st.promptTokens() + "\n"
                    + "# TYPE vllm:prefix_cache_hits counter\nvllm:prefix_cache_hits_total" + label + " "
                    + st.gpuHitTokens() + "\n"
                    + "# TYPE vllm:external_prefix_cache_queries counter\nvllm:external_prefix_cache_queries_total"
                    + label + " " + (connector == null ? 0 : st.promptTokens() - st.gpuHitTokens()) + "\n"
                    + "# TYPE vllm:external_prefix_cache_hits counter\nvllm:external_prefix_cache_hits_total" + label
                    + " " + st.externalHitTokens() + "\n"
                    + "# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total" + label + " "
                    + st.preemptions() + "\n"
                    + "# TYPE vllm:request_success counter\nvllm:request_success_total" + label + " "
                    + st.finished() + "\n";
            OpenAiReplies.reply(x, 200, "text/plain; version=0.0.4", text);
        }
    }


    /** Clears the prefix cache, as vLLM's /reset_prefix_cache does (AllBlocksCleared), at the next step. */
    public void resetPrefixCache() {
        inbox.add((Runnable) () -> {
            pool.reset();
            publish();
        });
    }

    @Override
    public void close() {
        closed = true;
        http.stop(0);
        stepper.interrupt();
        try {
            stepper.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        requests.shutdownNow();
        loaders.shutdownNow();
        events.close();
        if (connector != null) {
            connector.close();
        }
    }
}
