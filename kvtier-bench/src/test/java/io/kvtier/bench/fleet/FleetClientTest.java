package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Against a real HTTP server that answers as vLLM's OpenAI server does (or does not answer at all). */
class FleetClientTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    static {
        // The JDK's server leaves Nagle on: each event would wait for the client's delayed ACK (40 ms).
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    private HttpServer server;
    private final CountDownLatch release = new CountDownLatch(1);
    private final List<String> paths = new CopyOnWriteArrayList<>();
    private final List<JsonNode> bodies = new CopyOnWriteArrayList<>();

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        handle("/a", x -> stream(x, 7));
        handle("/b", x -> stream(x, 7));
        handle("/uncached", x -> stream(x, 0));
        handle("/bad", x -> reply(x, 400, "{\"error\": {\"message\": \"max_tokens must be at least 1\", "
                + "\"type\": \"BadRequestError\", \"param\": null, \"code\": 400}}"));
        handle("/old", x -> reply(x, 404, "{\"object\": \"error\", \"message\": \"The model `m` does not exist.\", "
                + "\"type\": \"NotFoundError\", \"param\": null, \"code\": 404}"));
        handle("/plain", x -> reply(x, 502, "Bad Gateway"));
        handle("/silent", x -> await());
        handle("/stall", x -> {
            OutputStream out = events(x);
            event(out, tokenEvent(" hi", null));
            await();
        });
        handle("/broken", x -> {
            OutputStream out = events(x);
            event(out, tokenEvent(" hi", null));
            event(out, "{\"error\": {\"object\": \"error\", \"message\": \"engine died\", \"type\": "
                    + "\"InternalServerError\", \"param\": null, \"code\": 500}}");
            event(out, "[DONE]");
            out.close();
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        release.countDown();
        server.stop(0);
    }

    private void handle(String base, HttpHandler handler) {
        server.createContext(base + "/v1/completions", x -> {
            try (x) {
                paths.add(base);
                JsonNode body = JSON.readTree(x.getRequestBody());
                bodies.add(body);
                x.setAttribute("body", body);
                handler.handle(x);
            }
        });
    }

    private void await() {
        try {
            release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** As vLLM streams a completion: one event per token, the usage with no choices, then [DONE]. */
    private static void stream(HttpExchange x, int cached) throws IOException {
        JsonNode body = (JsonNode) x.getAttribute("body");
        int prompt = body.path("prompt").size();
        int maxTokens = body.path("max_tokens").asInt();
        OutputStream out = events(x);
        sleep(30); // the prefill: TTFT must cover it
        for (int t = 0; t < maxTokens; t++) {
            event(out, tokenEvent(" hi", t == maxTokens - 1 ? "\"length\"" : null));
        }
        String details = cached > 0 ? ", \"prompt_tokens_details\": {\"cached_tokens\": " + cached + "}" : "";
        event(out, "{\"id\": \"cmpl-1\", \"object\": \"text_completion\", \"created\": 1, \"model\": \"m\", "
                + "\"choices\": [], \"usage\": {\"prompt_tokens\": " + prompt + ", \"total_tokens\": "
                + (prompt + maxTokens) + ", \"completion_tokens\": " + maxTokens + details + "}}");
        event(out, "[DONE]");
        out.close();
    }

    private static String tokenEvent(String text, String finishReason) {
        return "{\"id\": \"cmpl-1\", \"object\": \"text_completion\", \"created\": 1, \"model\": \"m\", \"choices\": "
                + "[{\"index\": 0, \"text\": \"" + text + "\", \"logprobs\": null, \"finish_reason\": " + finishReason
                + ", \"stop_reason\": null}], \"usage\": null}";
    }

    private static OutputStream events(HttpExchange x) throws IOException {
        x.getResponseHeaders().set("Content-Type", "text/event-stream");
        x.sendResponseHeaders(200, 0);
        return x.getResponseBody();
    }

    private static void event(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void reply(HttpExchange x, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        x.sendResponseHeaders(status, bytes.length);
        x.getResponseBody().write(bytes);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private URI base(String path) {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
    }

    private FleetClient client(Duration timeout, int maxInFlight, String... bases) {
        return new FleetClient(java.util.Arrays.stream(bases).map(this::base).toList(), "m", timeout, maxInFlight);
    }

    private static FleetRequest request(int promptTokens, int maxTokens) {
        return new FleetRequest("user-1", 0, IntStream.range(1000, 1000 + promptTokens).toArray(), maxTokens);
    }

    private static RequestResult get(CompletableFuture<RequestResult> f) throws Exception {
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void timesAStreamedCompletionAndReadsItsUsage() throws Exception {
        try (FleetClient client = client(TIMEOUT, 8, "/a")) {
            FleetRequest request = request(40, 3);
            RequestResult r = get(client.send(request));

            assertThat(r.error()).isNull();
            assertThat(r.request()).isSameAs(request);
            assertThat(r.promptTokens()).isEqualTo(40);
            assertThat(r.completionTokens()).isEqualTo(3);
            assertThat(r.cachedTokens()).isEqualTo(7);
            assertThat(r.firstTokenNanos() - r.sentNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(30));
            assertThat(r.endNanos()).isGreaterThanOrEqualTo(r.firstTokenNanos());
            assertThat(client.inFlight()).isZero();
        }
    }

    @Test
    void sendsTheTokenIdsAsAStreamingCompletionThatIgnoresEos() throws Exception {
        try (FleetClient client = client(TIMEOUT, 8, "/a")) {
            get(client.send(new FleetRequest("u", 0, new int[] {1001, 1002, 29_999}, 5)));
        }
        JsonNode body = bodies.getFirst();
        assertThat(body.path("model").asText()).isEqualTo("m");
        assertThat(JSON.convertValue(body.path("prompt"), int[].class)).containsExactly(1001, 1002, 29_999);
        assertThat(body.path("max_tokens").asInt()).isEqualTo(5);
        assertThat(body.path("ignore_eos").asBoolean()).isTrue();
        assertThat(body.path("stream").asBoolean()).isTrue();
        assertThat(body.path("stream_options").path("include_usage").asBoolean()).isTrue();
        assertThat(body.has("min_tokens")).isFalse();
    }

    @Test
    void cachedTokensAreZeroWhenVllmLeavesThePromptDetailsOut() throws Exception {
        try (FleetClient client = client(TIMEOUT, 8, "/uncached")) {
            RequestResult r = get(client.send(request(10, 2)));
            assertThat(r.ok()).isTrue();
            assertThat(r.cachedTokens()).isZero();
        }
    }

    @Test
    void spreadsRequestsOverTheBasesRoundRobin() throws Exception {
        try (FleetClient client = client(TIMEOUT, 8, "/a", "/b")) {
            for (int i = 0; i < 4; i++) {
                assertThat(get(client.send(request(5, 1))).ok()).isTrue();
            }
        }
        assertThat(paths).containsExactly("/a", "/b", "/a", "/b");
    }

    @Test
    void anErrorStatusCarriesTheOpenAiMessage() throws Exception {
        try (FleetClient client = client(TIMEOUT, 8, "/bad", "/old", "/plain")) {
            assertThat(get(client.send(request(5, 1))).error()).isEqualTo("HTTP 400: max_tokens must be at least 1");
            assertThat(get(client.send(request(5, 1))).error()).isEqualTo("HTTP 404: The model `m` does not exist.");
            assertThat(get(client.send(request(5, 1))).error()).isEqualTo("HTTP 502: Bad Gateway");
        }
    }

    @Test
    void anErrorEventInTheStreamFailsTheRequest() throws Exception {
        try (FleetClient client = client(TIMEOUT, 8, "/broken")) {
            assertThat(get(client.send(request(5, 4))).error()).isEqualTo("stream: engine died");
        }
    }

    @Test
    void aServerThatNeverAnswersTimesOutAsAResult() throws Exception {
        try (FleetClient client = client(Duration.ofMillis(300), 8, "/silent")) {
            long start = System.nanoTime();
            RequestResult r = get(client.send(request(5, 1)));
            assertThat(r.error()).isEqualTo("timeout: no complete answer within 300 ms");
            assertThat(System.nanoTime() - start).isBetween(TimeUnit.MILLISECONDS.toNanos(290),
                    TimeUnit.SECONDS.toNanos(3));
            assertThat(client.inFlight()).isZero();
        }
    }

    @Test
    void theTimeoutBoundsTheWholeStreamNotJustTheHeaders() throws Exception {
        try (FleetClient client = client(Duration.ofMillis(300), 8, "/stall")) {
            RequestResult r = get(client.send(request(5, 10)));
            assertThat(r.error()).startsWith("timeout");
        }
    }

    @Test
    void aRefusedConnectionIsAnErrorResult() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        try (FleetClient client = new FleetClient(List.of(URI.create("http://127.0.0.1:" + port)), "m", TIMEOUT, 8)) {
            RequestResult r = get(client.send(request(5, 1)));
            assertThat(r.ok()).isFalse();
            assertThat(r.error()).startsWith("client: ");
        }
    }

    @Test
    void aRequestBeyondTheCapFailsAtOnceInsteadOfBlocking() throws Exception {
        try (FleetClient client = client(TIMEOUT, 1, "/silent")) {
            CompletableFuture<RequestResult> first = client.send(request(5, 1));
            CompletableFuture<RequestResult> second = client.send(request(5, 1));

            assertThat(second).isDone();
            assertThat(second.join().error()).isEqualTo("client: too many requests in flight (1)");
            assertThat(first).isNotDone();
            release.countDown(); // the silent server ends the exchange without an answer
            assertThat(get(first).ok()).isFalse();
        }
    }

    @Test
    void closingEndsRequestsInFlightWithErrors() throws Exception {
        CompletableFuture<RequestResult> pending;
        try (FleetClient client = client(TIMEOUT, 8, "/silent")) {
            pending = client.send(request(5, 1));
            while (paths.isEmpty()) {
                Thread.sleep(5);
            }
        }
        assertThat(get(pending).ok()).isFalse();
    }

    @Test
    void refusesBadArguments() {
        assertThatThrownBy(() -> new FleetClient(List.of(URI.create("ftp://host:1")), "m", TIMEOUT, 1))
                .hasMessageContaining("ftp://host:1");
        assertThatThrownBy(() -> new FleetClient(List.of(), "m", TIMEOUT, 1)).hasMessageContaining("base URL");
        assertThatThrownBy(() -> new FleetClient(List.of(base("/a")), "m", Duration.ZERO, 1))
                .hasMessageContaining("timeout");
        assertThatThrownBy(() -> new FleetClient(List.of(base("/a")), "m", TIMEOUT, 0))
                .hasMessageContaining("in flight 0");
    }
}
