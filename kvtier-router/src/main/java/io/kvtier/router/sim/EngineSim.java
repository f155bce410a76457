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
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * An emulated vLLM engine: the OpenAI API vLLM serves, the prefix cache of its GPU block pool (BlockPool), the KV
 * events vLLM publishes (byte for byte, over ZMQ), the /metrics a router reads load from, and answers that take the
 * time a simple cost model gives: prefill of the tokens not cached, then decode, token by token. No model runs; the
 * answer's text is filler. Requests beyond --max-seqs, or that the pool cannot hold, wait in arrival order.
 *
 * It is what the router's tests and benchmarks run several of: everything a router sees of an engine is real (HTTP,
 * SSE, ZMQ, msgpack), only the GPU's work is a sleep. The fleet benchmark (issue 15) replaces the cost model.
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
    private final Object lock = new Object();
    private int running;
    private final java.util.ArrayDeque<Object> queue = new java.util.ArrayDeque<>();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong promptTokens = new AtomicLong();
    private final AtomicLong cachedTokens = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();

    public EngineSim(EngineSimOptions options, Tokenizer tokenizer, ChatTemplate chatTemplate) throws IOException {
        this.options = options;
        this.tokenizer = tokenizer;
        this.chatTemplate = chatTemplate;
        this.pool = new BlockPool(options.gpuBlocks(), options.blockSize(), new java.security.SecureRandom().nextLong());
        this.events = new EventPublisher("tcp://" + options.host() + ":" + options.eventsPort(),
                options.replayPort() < 0 ? null : "tcp://" + options.host() + ":" + options.replayPort(),
                options.topic(), options.layout() == Layout.MAP_V0_26, 10_000, null);
        OpenAiReplies.noDelay();
        this.http = HttpServer.create(new InetSocketAddress(options.host(), options.port()), 256);
        http.setExecutor(requests);
        http.createContext("/v1/completions", x -> serve(x, false));
        http.createContext("/v1/chat/completions", x -> serve(x, true));
        http.createContext("/v1/models", this::models);
        http.createContext("/health", x -> OpenAiReplies.reply(x, 200, "text/plain", ""));
        http.createContext("/metrics", this::metrics);
        http.start();
        log.info("engine-sim {} on http://{}:{} (events tcp://{}:{}{}), {} blocks of {} tokens", options.model(),
                options.host(), port(), options.host(), events.port(),
                events.replayPort() < 0 ? "" : ", replay " + events.replayPort(), options.gpuBlocks(),
                options.blockSize());
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
            if (!x.getRequestMethod().equals("POST")) {
                OpenAiReplies.error(x, 405, "use POST");
                return;
            }
            JsonNode body;
            try {
                body = JSON.readTree(x.getRequestBody());
            } catch (IOException e) {
                OpenAiReplies.error(x, 400, "the body is not JSON: " + e.getMessage());
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

    /** Waits for a slot and blocks, prefills what is not cached, then decodes, streaming or not. */
    private void run(HttpExchange x, boolean chat, boolean stream, boolean streamUsage, int[] prompt, int maxTokens)
            throws IOException, InterruptedException {
        BlockPool.Allocation a = null;
        Object ticket = new Object();
        synchronized (lock) {
            // First come, first served, as vLLM's scheduler: only the head of the queue may start.
            queue.addLast(ticket);
            try {
                while (queue.peekFirst() != ticket || running >= options.maxSeqs()
                        || (a = pool.allocate(prompt, maxTokens)) == null) {
                    lock.wait();
                }
                running++;
            } finally {
                queue.remove(ticket);
                lock.notifyAll();
            }
        }
        String id = (chat ? "chatcmpl-" : "cmpl-") + Long.toHexString(ids.incrementAndGet());
        int cached = a.hitBlocks() * options.blockSize();
        try {
            sleepMicros((long) (prompt.length - cached) * options.prefillMicrosPerToken());
            synchronized (lock) {
                pool.computed(a, prompt);
            }
            publish();
            if (stream) {
                streamAnswer(x, chat, id, prompt.length, cached, maxTokens, streamUsage);
            } else {
                sleepMicros((long) maxTokens * options.decodeMicrosPerToken());
                OpenAiReplies.reply(x, 200, "application/json", JSON.writeValueAsString(
                        completion(chat, id, Filler.text(maxTokens), prompt.length, cached, maxTokens)));
            }
        } finally {
            synchronized (lock) {
                pool.release(a);
                running--;
                lock.notifyAll();
            }
            promptTokens.addAndGet(prompt.length);
            cachedTokens.addAndGet(cached);
            finished.incrementAndGet();
        }
    }

    private void streamAnswer(HttpExchange x, boolean chat, String id, int prompt, int cached, int maxTokens,
            boolean withUsage)
            throws IOException, InterruptedException {
        x.getResponseHeaders().set("Content-Type", "text/event-stream");
        x.sendResponseHeaders(200, 0);
        OutputStream out = x.getResponseBody();
        for (int t = 0; t < maxTokens; t++) {
            sleepMicros(options.decodeMicrosPerToken());
            ObjectNode chunk = JSON.createObjectNode().put("id", id)
                    .put("object", chat ? "chat.completion.chunk" : "text_completion")
                    .put("created", System.currentTimeMillis() / 1000).put("model", options.model());
            ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
            if (chat) {
                choice.putObject("delta").put("content", Filler.word(t));
            } else {
                choice.put("text", Filler.word(t));
            }
            if (t == maxTokens - 1) {
                choice.put("finish_reason", "length");
            } else {
                choice.putNull("finish_reason");
            }
            out.write(("data: " + JSON.writeValueAsString(chunk) + "\n\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
        if (withUsage) { // vLLM sends usage in a stream only when stream_options.include_usage asks for it
            ObjectNode usage = JSON.createObjectNode().put("id", id).put("model", options.model());
            usage.putArray("choices");
            usage.set("usage", usage(prompt, cached, maxTokens));
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

    private void publish() {
        List<KvEvent> batch;
        synchronized (lock) {
            batch = pool.drainEvents();
            if (!batch.isEmpty()) {
                events.publish(VllmEventCodec.encode(new KvEventBatch(System.currentTimeMillis() / 1000.0, batch, 0L),
                        options.layout()));
            }
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
            int r;
            int w;
            double usage;
            synchronized (lock) {
                r = running;
                w = queue.size();
                usage = pool.usage();
            }
            String label = "{model_name=\"" + options.model() + "\"}";
            String text = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running" + label + " " + r + "\n"
                    + "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting" + label + " " + w + "\n"
                    + "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc" + label + " " + usage + "\n"
                    + "# TYPE vllm:prefix_cache_queries counter\nvllm:prefix_cache_queries_total" + label + " "
                    + promptTokens.get() + "\n"
                    + "# TYPE vllm:prefix_cache_hits counter\nvllm:prefix_cache_hits_total" + label + " "
                    + cachedTokens.get() + "\n"
                    + "# TYPE vllm:request_success counter\nvllm:request_success_total" + label + " "
                    + finished.get() + "\n";
            OpenAiReplies.reply(x, 200, "text/plain; version=0.0.4", text);
        }
    }


    private static void sleepMicros(long micros) throws InterruptedException {
        if (micros > 0) {
            TimeUnit.MICROSECONDS.sleep(micros);
        }
    }

    /** Clears the prefix cache, as vLLM's /reset_prefix_cache does (AllBlocksCleared). */
    public void resetPrefixCache() {
        synchronized (lock) {
            pool.reset();
        }
        publish();
    }

    @Override
    public void close() {
        http.stop(0);
        requests.shutdownNow();
        events.close();
    }
}
