package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvtier.common.Json;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The router as users run it: {@code ./kvtier router} in front of three {@code ./kvtier engine-sim} processes, real
 * HTTP and real ZMQ between them. Each policy's choices are read from the engines' own answers (how many prompt tokens
 * they served from cache), the map from the lookup API; streaming, a killed engine, a lost event stream and the
 * request deadline are each exercised for real.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RouterIT {
    /** A path into a parsed JSON tree (keys of objects, indexes of arrays); null where it leads nowhere. */
    private static Object at(Object tree, Object... path) {
        for (Object step : path) {
            if (step instanceof String k && tree instanceof java.util.Map<?, ?> m) {
                tree = m.get(k);
            } else if (step instanceof Integer i && tree instanceof List<?> l && i < l.size()) {
                tree = l.get(i);
            } else {
                return null;
            }
        }
        return tree;
    }

    private static int number(Object tree, Object... path) {
        return at(tree, path) instanceof java.math.BigDecimal n ? n.intValue() : -1;
    }
    private static final int PROMPT = 160; // 10 blocks of 16: a repeat is served 144 from cache (the last block is recomputed)
    @TempDir
    static Path dir;
    private final List<HttpProcess> engines = new ArrayList<>();
    private final int[] eventPorts = new int[3];
    private final int[] replayPorts = new int[3];

    @BeforeAll
    void startEngines() throws Exception {
        // Engines 0 and 1 publish on consecutive ports, as two data-parallel ranks of one vLLM server do.
        int events = io.kvtier.testkit.LocalPorts.freePair();
        int replays = io.kvtier.testkit.LocalPorts.freePair();
        for (int i = 0; i < 3; i++) {
            int port = KvtierProcess.freePort();
            eventPorts[i] = i < 2 ? events + i : KvtierProcess.freePort();
            replayPorts[i] = i < 2 ? replays + i : KvtierProcess.freePort();
            engines.add(HttpProcess.start(dir.resolve("engine" + i + ".log"), port, "engine-sim", "--port",
                    Integer.toString(port), "--events-port", Integer.toString(eventPorts[i]), "--replay-port",
                    Integer.toString(replayPorts[i]), "--gpu-blocks", "512", "--prefill-us", "20",
                    "--decode-us", "2000"));
        }
    }

    @AfterAll
    void stopEngines() throws Exception {
        for (HttpProcess e : engines) {
            e.close();
        }
    }

    private HttpProcess router(String policy, boolean events, String... more) throws Exception {
        int port = KvtierProcess.freePort();
        List<String> args = new ArrayList<>(List.of("router", "--port", Integer.toString(port), "--policy", policy,
                "--probe-interval", "200", "--probe-timeout", "1000"));
        for (int i = 0; i < engines.size(); i++) {
            args.add("--engine");
            args.add("http://127.0.0.1:" + engines.get(i).port() + (events ? ",events=tcp://127.0.0.1:" + eventPorts[i]
                    + ",replay=tcp://127.0.0.1:" + replayPorts[i] : ""));
        }
        args.addAll(List.of(more));
        HttpProcess r = HttpProcess.start(dir.resolve("router-" + policy + "-" + port + ".log"), port,
                args.toArray(String[]::new));
        awaitHealthy(r, engines.size());
        return r;
    }

    private static void awaitHealthy(HttpProcess router, int n) throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (!router.get("/health").body().startsWith(n + " of")) {
            assertThat(System.nanoTime()).as("%d engines healthy within 20 s", n).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static String prompt(int seed) {
        return IntStream.range(0, PROMPT).mapToObj(t -> Integer.toString(seed * 1000 + t))
                .collect(Collectors.joining(",", "[", "]"));
    }

    /** Sends {@code prompt} through the router; returns the answer's cached prompt tokens. */
    private static int cached(HttpProcess router, String prompt) throws Exception {
        HttpResponse<String> r = router.post("/v1/completions",
                "{\"model\":\"sim-model\",\"max_tokens\":2,\"prompt\":" + prompt + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return number(Json.parse(r.body()), "usage", "prompt_tokens_details", "cached_tokens");
    }

    /** Waits until the router's map shows {@code prompt} held by some engine; returns which. */
    private static String awaitHolder(HttpProcess router, String prompt) throws Exception {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (true) {
            Object found = at(Json.parse(router.post("/v1/kv/lookup", "{\"model\":\"sim-model\",\"token_ids\":"
                    + prompt + "}").body()), "engines");
            if (found instanceof List<?> l && l.size() == 1 && number(l, 0, "tokens", "GPU") == PROMPT) {
                return (String) at(l, 0, "engine");
            }
            assertThat(System.nanoTime()).as("the map shows the prompt within 10 s: " + found).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void prefixRoutingSendsEachRepeatToTheEngineHoldingItsPrefix() throws Exception {
        try (HttpProcess router = router("prefix", true)) {
            for (int p = 1; p <= 6; p++) {
                String prompt = prompt(p);
                assertThat(cached(router, prompt)).isZero();
                awaitHolder(router, prompt);
                assertThat(cached(router, prompt)).as("prompt %d repeated", p).isEqualTo(PROMPT - 16);
                assertThat(cached(router, prompt)).isEqualTo(PROMPT - 16);
            }
            String metrics = router.get("/metrics").body();
            assertThat(metrics).contains("reason=\"prefix: longest prefix\"} 12.0")
                    .contains("kvtier_router_predicted_cached_tokens_total 1920.0") // 12 repeats x 160 credited
                    .contains("kvtier_router_cached_tokens_total 1728.0")          // 12 x 144 served from cache
                    .contains("kvtier_router_pending_prefill_tokens{engine=\"127.0.0.1:" + engines.get(0).port()
                            + "\"} 0.0") // every request answered: none of it left pending
                    .contains("kvtier_router_pending_prefill_tokens{engine=\"127.0.0.1:" + engines.get(1).port()
                            + "\"} 0.0");
        }
    }

    @Test
    void roundRobinSpreadsRepeatsAndApproxPrefixFollowsItsOwnRecord() throws Exception {
        int roundRobinHits = 0;
        try (HttpProcess router = router("round-robin", false)) {
            for (int p = 11; p <= 13; p++) {
                for (int k = 0; k < 3; k++) {
                    roundRobinHits += cached(router, prompt(p)) > 0 ? 1 : 0;
                }
            }
        }
        assertThat(roundRobinHits).as("round robin: each of 3 repeats on another engine").isZero();
        try (HttpProcess router = router("approx-prefix", false)) {
            for (int p = 21; p <= 23; p++) {
                assertThat(cached(router, prompt(p))).isZero();
                assertThat(cached(router, prompt(p))).isEqualTo(PROMPT - 16);
                assertThat(cached(router, prompt(p))).isEqualTo(PROMPT - 16);
            }
        }
    }

    @Test
    void streamsPassThroughChunkByChunkWithinTheDeadline() throws Exception {
        try (HttpProcess router = router("least-load", true, "--request-timeout", "5")) {
            HttpClient http = HttpClient.newHttpClient();
            cached(router, prompt(90)); // a warm router: the first request pays for class loading
            long start = System.nanoTime();
            HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                    + router.port() + "/v1/chat/completions")).POST(HttpRequest.BodyPublishers.ofString(
                    "{\"model\":\"sim-model\",\"max_tokens\":200,\"stream\":true,\"messages\":[{\"role\":\"user\","
                            + "\"content\":\"hi\"}]}")).build(), HttpResponse.BodyHandlers.ofInputStream());
            assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream");
            byte[] first = new byte[6];
            try (InputStream in = r.body()) {
                assertThat(in.readNBytes(first, 0, 6)).isEqualTo(6);
                double firstMs = (System.nanoTime() - start) / 1e6;
                assertThat(new String(first, StandardCharsets.UTF_8)).isEqualTo("data: ");
                byte[] rest = in.readAllBytes(); // 200 tokens at 2 ms each: 0.4 s of decode, well within the deadline
                double allMs = (System.nanoTime() - start) / 1e6;
                assertThat(firstMs).as("the first chunk comes before the rest (not buffered)").isLessThan(allMs - 150);
                String all = new String(first, StandardCharsets.UTF_8) + new String(rest, StandardCharsets.UTF_8);
                assertThat(all).endsWith("data: [DONE]\n\n");
                // one event per token, or several tokens in one when the engine's writer falls behind (as vLLM's)
                assertThat(all.split("\n\n").length).isBetween(3, 201);
                assertThat(all.split("\"content\":\"").length - 1).isEqualTo(all.split("\n\n").length - 1);
            }
        }
    }

    @Test
    void twoRoutersFollowingTheSameEnginesGiveTheSameAnswers() throws Exception {
        try (HttpProcess first = router("prefix", true); HttpProcess second = router("prefix", true)) {
            for (int p = 51; p <= 56; p++) {
                assertThat(cached(p % 2 == 0 ? first : second, prompt(p))).isZero();
            }
            for (int p = 51; p <= 56; p++) {
                String holder = awaitHolder(first, prompt(p));
                assertThat(awaitHolder(second, prompt(p))).as("prompt %d", p).isEqualTo(holder);
                String lookup = "{\"model\":\"sim-model\",\"token_ids\":" + prompt(p) + "}";
                assertThat(Json.parse(second.post("/v1/kv/lookup", lookup).body()))
                        .isEqualTo(Json.parse(first.post("/v1/kv/lookup", lookup).body()));
                // a repeat through either is served from the holder's cache
                assertThat(cached(p % 2 == 0 ? second : first, prompt(p))).isEqualTo(PROMPT - 16);
            }
        }
    }

    @Test
    void enginesPublishingToOneBoundPortAreToldApartByTheirTopics() throws Exception {
        int shared = KvtierProcess.freePort();
        List<HttpProcess> sims = new ArrayList<>();
        int routerPort = KvtierProcess.freePort();
        List<String> args = new ArrayList<>(List.of("router", "--port", Integer.toString(routerPort), "--policy",
                "prefix", "--probe-interval", "200", "--probe-timeout", "1000"));
        try {
            for (String pod : List.of("10.1.0.5", "10.1.0.55")) { // one a prefix of the other but for the @
                int port = KvtierProcess.freePort();
                int replay = KvtierProcess.freePort();
                sims.add(HttpProcess.start(dir.resolve("central-" + pod + ".log"), port, "engine-sim", "--port",
                        Integer.toString(port), "--events-connect", "tcp://127.0.0.1:" + shared, "--replay-port",
                        Integer.toString(replay), "--topic", "kv@" + pod + "@sim-model", "--gpu-blocks", "512",
                        "--prefill-us", "20", "--decode-us", "2000"));
                args.add("--engine");
                args.add("http://127.0.0.1:" + port + ",events=tcp://*:" + shared + ",replay=tcp://127.0.0.1:"
                        + replay + ",topic=kv@" + pod + "@");
            }
            try (HttpProcess router = HttpProcess.start(dir.resolve("router-central.log"), routerPort,
                    args.toArray(String[]::new))) {
                awaitHealthy(router, 2);
                java.util.Set<String> holders = new java.util.HashSet<>();
                for (int p = 61; p <= 66; p++) {
                    assertThat(cached(router, prompt(p))).isZero();
                    holders.add(awaitHolder(router, prompt(p)));
                    for (int again = 0; again < 2; again++) { // three choices a prompt: ties of load take turns
                        assertThat(cached(router, prompt(p))).as("prompt %d repeated", p).isEqualTo(PROMPT - 16);
                    }
                }
                assertThat(holders).as("both engines' events are followed, each as its own").hasSize(2);
                assertThat(router.get("/metrics").body()).doesNotContainPattern("kvtier_map_event_resyncs\\{[^}]*\\} [1-9]");
            }
        } finally {
            for (HttpProcess sim : sims) {
                sim.close();
            }
        }
    }

    @Test
    void aKilledEngineIsSkippedAndItsEntriesDropped() throws Exception {
        int port = KvtierProcess.freePort();
        int events = KvtierProcess.freePort();
        HttpProcess doomed = HttpProcess.start(dir.resolve("doomed.log"), port, "engine-sim", "--port",
                Integer.toString(port), "--events-port", Integer.toString(events), "--replay-port", "-1");
        int routerPort = KvtierProcess.freePort();
        List<String> args = new ArrayList<>(List.of("router", "--port", Integer.toString(routerPort), "--policy",
                "prefix", "--probe-interval", "200", "--probe-timeout", "1000", "--request-timeout", "5",
                "--engine", "http://127.0.0.1:" + port + ",events=tcp://127.0.0.1:" + events,
                // an event stream nobody publishes: that engine is scored by load alone, and serves all the same
                "--engine", "http://127.0.0.1:" + engines.get(0).port() + ",events=tcp://127.0.0.1:"
                        + KvtierProcess.freePort()));
        try (HttpProcess router = HttpProcess.start(dir.resolve("router-kill.log"), routerPort,
                args.toArray(String[]::new))) {
            awaitHealthy(router, 2);
            for (int p = 31; p <= 34; p++) {
                cached(router, prompt(p));
            }
            assertThat(router.get("/metrics").body()).contains("kvtier_router_requests_total{engine=\"127.0.0.1:"
                    + engines.get(0).port() + "\",outcome=\"ok\"}");
            doomed.kill();
            long killed = System.nanoTime();
            for (int p = 31; p <= 40; p++) {
                cached(router, prompt(p)); // every request answered: retried elsewhere before its first byte
            }
            awaitHealthy(router, 1);
            double skippedAfterMs = (System.nanoTime() - killed) / 1e6;
            assertThat(skippedAfterMs).isLessThan(5_000);
            Object found = at(Json.parse(router.post("/v1/kv/lookup", "{\"model\":\"sim-model\",\"token_ids\":"
                    + prompt(31) + "}").body()), "engines");
            assertThat(String.valueOf(found)).doesNotContain("127.0.0.1:" + port);
        } finally {
            doomed.close();
        }
    }

    @Test
    void aRequestIsNeverHeldPastTheDeadline() throws Exception {
        try (HttpProcess router = router("least-load", true, "--request-timeout", "1")) {
            long start = System.nanoTime();
            HttpResponse<String> r;
            try {
                r = router.post("/v1/completions", "{\"model\":\"sim-model\",\"max_tokens\":1500,\"prompt\":\"hi\"}");
                assertThat(r.statusCode()).isEqualTo(504);
            } catch (java.io.IOException cut) {
                // the answer had begun: the connection is cut at the deadline, which is as good
            }
            assertThat((System.nanoTime() - start) / 1e6).isBetween(900.0, 2_500.0);
            assertThat(router.post("/v1/completions", "{\"model\":\"nope\",\"prompt\":\"hi\"}").statusCode())
                    .isEqualTo(404);
            assertThat(router.post("/v1/completions", "{\"prompt\":\"hi\"}").statusCode()).isEqualTo(400);
        }
    }

    /** vLLM's other endpoints reach an engine (issue 33); a path nobody serves is a JSON error, not an HTML page. */
    /**
     * vLLM's data-parallel server as the router meets it: one HTTP port in front of two ranks (engines 0 and 1 behind
     * a front that speaks vLLM's DP surface: the rank named by X-data-parallel-rank serves a request, /metrics labels
     * each rank's series engine="RANK"), each rank publishing its KV events on the base port plus its rank. One
     * {@code --engine URL,...,dp=2} is two engines: each rank's events followed, each repeat sent to the rank that
     * holds its prefix.
     */
    @Test
    void twoDataParallelRanksBehindOneUrlAreTwoEngines() throws Exception {
        List<Integer> ranks = new java.util.concurrent.CopyOnWriteArrayList<>();
        int frontPort = KvtierProcess.freePort();
        com.sun.net.httpserver.HttpServer front = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress("127.0.0.1", frontPort), 16);
        HttpClient http = HttpClient.newHttpClient();
        front.createContext("/", x -> {
            try (x) {
                String path = x.getRequestURI().getPath();
                int status;
                byte[] body;
                if (x.getRequestMethod().equals("POST")) {
                    String header = x.getRequestHeaders().getFirst("X-data-parallel-rank");
                    int rank = header == null ? 0 : Integer.parseInt(header);
                    ranks.add(rank);
                    HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + engines.get(rank).port() + path)).header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofByteArray(x.getRequestBody().readAllBytes())).build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    status = r.statusCode();
                    body = r.body();
                } else if (path.equals("/metrics")) {
                    StringBuilder all = new StringBuilder();
                    for (int rank = 0; rank < 2; rank++) {
                        for (String line : engines.get(rank).get("/metrics").body().split("\n")) {
                            if (line.startsWith("vllm:")) { // vLLM labels every rank's series with its index
                                all.append(line.replaceFirst("\\{", "{engine=\"" + rank + "\",")).append('\n');
                            }
                        }
                    }
                    status = 200;
                    body = all.toString().getBytes(StandardCharsets.UTF_8);
                } else {
                    HttpResponse<String> r = engines.get(0).get(path);
                    status = r.statusCode();
                    body = r.body().getBytes(StandardCharsets.UTF_8);
                }
                x.getResponseHeaders().add("Content-Type", "application/json");
                x.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
                x.getResponseBody().write(body);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        front.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        front.start();
        int port = KvtierProcess.freePort();
        try (HttpProcess router = HttpProcess.start(dir.resolve("router-dp.log"), port, "router", "--port",
                Integer.toString(port), "--policy", "prefix", "--probe-interval", "200", "--probe-timeout", "1000",
                "--engine", "http://127.0.0.1:" + frontPort + ",events=tcp://127.0.0.1:" + eventPorts[0]
                        + ",replay=tcp://127.0.0.1:" + replayPorts[0] + ",dp=2")) {
            awaitHealthy(router, 2);
            Object map = Json.parse(router.get("/v1/kv/map").body());
            assertThat(List.of(at(map, "engines", 0, "engine"), at(map, "engines", 1, "engine")))
                    .containsExactlyInAnyOrder("127.0.0.1:" + frontPort + "/dp0", "127.0.0.1:" + frontPort + "/dp1");
            java.util.Set<String> holders = new java.util.HashSet<>();
            for (int p = 60; p < 66; p++) {
                String prompt = prompt(p);
                assertThat(cached(router, prompt)).isZero();
                int sentTo = ranks.get(ranks.size() - 1);
                String holder = awaitHolder(router, prompt); // the rank's own events, on its own port
                assertThat(holder).isEqualTo("127.0.0.1:" + frontPort + "/dp" + sentTo);
                holders.add(holder);
                for (int again = 0; again < 2; again++) { // three choices a prompt: ties of load take turns
                    assertThat(cached(router, prompt)).as("prompt %d repeated", p).isEqualTo(PROMPT - 16);
                    assertThat(ranks.get(ranks.size() - 1)).isEqualTo(sentTo);
                }
            }
            assertThat(holders).as("idle ranks share new prompts").hasSize(2);
            assertThat(ranks).doesNotContainNull().allMatch(r -> r == 0 || r == 1);
        } finally {
            front.stop(0);
        }
    }

    /**
     * A router restarted on its --state-file answers the lookups it answered before for blocks whose events are long
     * gone from the engine's replay buffer (4 batches here); one without the file knows nothing of them; and the saved
     * entries of an engine that restarted meanwhile are dropped, not served.
     */
    @Test
    void aRestartedRouterKnowsBlocksOlderThanTheReplayBufferAndForgetsThoseOfARestartedEngine() throws Exception {
        int port = KvtierProcess.freePort();
        int events = KvtierProcess.freePort();
        int replay = KvtierProcess.freePort();
        String[] engineArgs = {"engine-sim", "--port", Integer.toString(port), "--events-port",
            Integer.toString(events), "--replay-port", Integer.toString(replay), "--gpu-blocks", "512",
            "--prefill-us", "20", "--decode-us", "2000", "--replay-buffer", "4"};
        Path state = dir.resolve("router-map.state");
        String engine = "http://127.0.0.1:" + port + ",events=tcp://127.0.0.1:" + events + ",replay=tcp://127.0.0.1:"
                + replay;
        java.util.function.IntFunction<String[]> router = routerPort -> new String[] {"router", "--port",
            Integer.toString(routerPort), "--policy", "prefix", "--probe-interval", "200", "--probe-timeout", "1000",
            "--engine", engine, "--state-file", state.toString(), "--state-interval", "1"};
        HttpProcess sim = HttpProcess.start(dir.resolve("engine-state.log"), port, engineArgs);
        try {
            String early = prompt(70);
            int first = KvtierProcess.freePort();
            try (HttpProcess r = HttpProcess.start(dir.resolve("router-state-1.log"), first, router.apply(first))) {
                awaitHealthy(r, 1);
                cached(r, early);
                awaitHolder(r, early);
                for (int p = 71; p < 79; p++) { // 8 more prompts: the early one's batches leave the buffer of 4
                    cached(r, prompt(p));
                    awaitHolder(r, prompt(p));
                }
            } // stopped: its last save is on disk
            int second = KvtierProcess.freePort();
            try (HttpProcess r = HttpProcess.start(dir.resolve("router-state-2.log"), second, router.apply(second))) {
                awaitHealthy(r, 1);
                assertThat(awaitHolder(r, early)).isEqualTo("127.0.0.1:" + port);
                awaitHolder(r, prompt(78));
                Object map = Json.parse(r.get("/v1/kv/map").body());
                assertThat(number(map, "engines", 0, "events", "resyncs")).isZero();
                assertThat(r.logText()).contains("saved blocks put back");
                assertThat(cached(r, early)).as("routed to its holder").isEqualTo(PROMPT - 16);
            }
            int plain = KvtierProcess.freePort();
            try (HttpProcess r = HttpProcess.start(dir.resolve("router-state-none.log"), plain, "router", "--port",
                    Integer.toString(plain), "--engine", engine, "--probe-interval", "200")) {
                awaitHealthy(r, 1);
                awaitHolder(r, prompt(78)); // what the buffer still holds
                Object found = at(Json.parse(r.post("/v1/kv/lookup", "{\"model\":\"sim-model\",\"token_ids\":"
                        + prompt(70) + "}").body()), "engines");
                assertThat((List<?>) found).as("without the file, blocks older than the buffer are unknown").isEmpty();
            }
            sim.close();
            sim = HttpProcess.start(dir.resolve("engine-state-again.log"), port, engineArgs); // an empty cache
            int third = KvtierProcess.freePort();
            try (HttpProcess r = HttpProcess.start(dir.resolve("router-state-3.log"), third, router.apply(third))) {
                awaitHealthy(r, 1);
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (!r.logText().contains("is not the engine's")) {
                    assertThat(System.nanoTime()).as("the saved state is refused within 10 s").isLessThan(deadline);
                    Thread.sleep(50);
                }
                Object found = at(Json.parse(r.post("/v1/kv/lookup", "{\"model\":\"sim-model\",\"token_ids\":"
                        + prompt(70) + "}").body()), "engines");
                assertThat((List<?>) found).as("a restarted engine's old blocks are not served").isEmpty();
            }
        } finally {
            sim.close();
        }
    }

    @Test
    void otherOpenAiEndpointsArePassedToAnEngineAndUnknownPathsAnsweredInJson() throws Exception {
        try (HttpProcess router = router("least-load", false)) {
            String direct = engines.get(0).post("/tokenize", "{\"model\":\"sim-model\",\"prompt\":\"hello\"}").body();
            HttpResponse<String> named = router.post("/tokenize", "{\"model\":\"sim-model\",\"prompt\":\"hello\"}");
            assertThat(named.statusCode()).as(named.body()).isEqualTo(200);
            assertThat(named.body()).isEqualTo(direct).contains("\"count\":");
            // No model named: the only one the fleet serves, as vLLM defaults it.
            HttpResponse<String> unnamed = router.post("/tokenize", "{\"prompt\":\"hello\"}");
            assertThat(unnamed.statusCode()).as(unnamed.body()).isEqualTo(200);
            assertThat(unnamed.body()).isEqualTo(direct);
            assertThat(router.post("/tokenize", "{\"model\":\"nope\",\"prompt\":\"hi\"}").statusCode())
                    .isEqualTo(404);
            HttpResponse<String> unknown = router.post("/v1/nothing-here", "{}");
            assertThat(unknown.statusCode()).isEqualTo(404);
            assertThat(at(Json.parse(unknown.body()), "error")).isNotNull();
            assertThat(router.get("/tokenize").statusCode()).isEqualTo(405);
        }
    }

    @Test
    void textPromptsAreScoredWithTheModelsOwnTokenizer() throws Exception {
        // The model's directory: its tokenizer.json and chat template (ChatML-shaped), which the engines and the
        // router both render chat requests with.
        Path model = java.nio.file.Files.createDirectories(dir.resolve("model"));
        Path resources = KvtierProcess.ROOT.resolve("kvtier-router/src/test/resources");
        java.nio.file.Files.copy(resources.resolve("tokenizer/tokenizer.json"), model.resolve("tokenizer.json"));
        java.nio.file.Files.copy(resources.resolve("chat/im-style.jinja"), model.resolve("chat_template.jinja"));
        String tokenizer = model.toString();
        List<HttpProcess> sims = new ArrayList<>();
        List<String> args = new ArrayList<>(List.of("router", "--policy", "prefix", "--probe-interval", "200",
                "--tokenizer", tokenizer));
        try {
            for (int i = 0; i < 2; i++) {
                int port = KvtierProcess.freePort();
                int events = KvtierProcess.freePort();
                int replay = KvtierProcess.freePort();
                sims.add(HttpProcess.start(dir.resolve("tok-engine" + i + ".log"), port, "engine-sim", "--port",
                        Integer.toString(port), "--events-port", Integer.toString(events), "--replay-port",
                        Integer.toString(replay), "--tokenizer", tokenizer, "--decode-us", "1000"));
                args.addAll(List.of("--engine", "http://127.0.0.1:" + port + ",events=tcp://127.0.0.1:" + events
                        + ",replay=tcp://127.0.0.1:" + replay));
            }
            int routerPort = KvtierProcess.freePort();
            args.addAll(List.of("--port", Integer.toString(routerPort)));
            try (HttpProcess router = HttpProcess.start(dir.resolve("router-tok.log"), routerPort,
                    args.toArray(String[]::new))) {
                awaitHealthy(router, 2);
                String text = "You are a helpful assistant. Answer briefly and cite your sources. ".repeat(8);
                String body = "{\"model\":\"sim-model\",\"max_tokens\":2,\"prompt\":\"" + text + "\"}";
                HttpResponse<String> first = router.post("/v1/completions", body);
                int promptTokens = number(Json.parse(first.body()), "usage", "prompt_tokens");
                assertThat(promptTokens).as("the model's tokens, not bytes").isBetween(40, text.length() / 2);
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (at(Json.parse(router.post("/v1/kv/lookup", "{\"model\":\"sim-model\",\"prompt\":\""
                        + text + "\"}").body()), "engines", 0) == null) {
                    assertThat(System.nanoTime()).isLessThan(deadline);
                    Thread.sleep(20);
                }
                for (int k = 0; k < 3; k++) {
                    HttpResponse<String> again = router.post("/v1/completions", body);
                    assertThat(number(Json.parse(again.body()), "usage", "prompt_tokens_details", "cached_tokens"))
                            .isEqualTo(promptTokens / 16 * 16 - (promptTokens % 16 == 0 ? 16 : 0));
                }

                // A chat: the router renders the model's template as the engine does, so it finds the prefix.
                String messages = "[{\"role\":\"system\",\"content\":\"" + text + "\"},"
                        + "{\"role\":\"user\",\"content\":\"Where is my prefix cached?\"}]";
                String chat = "{\"model\":\"sim-model\",\"max_tokens\":2,\"messages\":" + messages + "}";
                int chatTokens = number(Json.parse(router.post("/v1/chat/completions", chat).body()), "usage",
                        "prompt_tokens");
                String chatLookup = "{\"model\":\"sim-model\",\"messages\":" + messages + "}";
                assertThat(number(Json.parse(router.post("/v1/kv/lookup", chatLookup).body()), "prompt_tokens"))
                        .as("the router's render and tokenization of the chat, as the engine's").isEqualTo(chatTokens);
                long chatDeadline = System.nanoTime() + 10_000_000_000L;
                while (at(Json.parse(router.post("/v1/kv/lookup", chatLookup).body()), "engines", 0) == null) {
                    assertThat(System.nanoTime()).isLessThan(chatDeadline);
                    Thread.sleep(20);
                }
                HttpResponse<String> chatAgain = router.post("/v1/chat/completions", chat);
                assertThat(number(Json.parse(chatAgain.body()), "usage", "prompt_tokens_details", "cached_tokens"))
                        .isEqualTo(chatTokens / 16 * 16 - (chatTokens % 16 == 0 ? 16 : 0));
            }
        } finally {
            for (HttpProcess sim : sims) {
                sim.close();
            }
        }
    }

    /**
     * Engines found by DNS, as behind a Kubernetes headless Service: every address of the name is an engine on the same
     * ports (two engine-sims on 127.0.0.1 and 127.0.0.2). The router's JVM resolves through a hosts file the test
     * rewrites (the JDK's jdk.net.hosts.file): an address added joins the fleet, with its KV events; one removed
     * leaves it; a name that stops resolving keeps the engines found before.
     */
    @Test
    void enginesFoundByDnsJoinAndLeave() throws Exception {
        assumeTrue(java.net.InetAddress.getByName("127.0.0.2").isReachable(1_000), "127.0.0.2 on loopback");
        int port = KvtierProcess.freePort();
        int events = KvtierProcess.freePort();
        int replay = KvtierProcess.freePort();
        Path hosts = dir.resolve("dns-hosts");
        java.nio.file.Files.writeString(hosts, "127.0.0.1 engines.kvtier.test\n");
        List<HttpProcess> sims = new ArrayList<>();
        try {
            for (String host : List.of("127.0.0.1", "127.0.0.2")) {
                sims.add(HttpProcess.startAt(host, java.util.Map.of(), dir.resolve("dns-engine-" + host + ".log"), port,
                        "engine-sim", "--host", host, "--port", Integer.toString(port), "--events-port",
                        Integer.toString(events), "--replay-port", Integer.toString(replay), "--decode-us", "1000"));
            }
            int routerPort = KvtierProcess.freePort();
            try (HttpProcess router = HttpProcess.startAt("127.0.0.1",
                    java.util.Map.of("KVTIER_JAVA_OPTS", "-Djdk.net.hosts.file=" + hosts), dir.resolve("router-dns.log"),
                    routerPort, "router", "--port", Integer.toString(routerPort), "--policy", "prefix",
                    "--probe-interval", "200", "--dns-interval", "200", "--engine-dns",
                    "engines.kvtier.test:" + port + ",events=" + events + ",replay=" + replay)) {
                awaitHealth(router, "1 of 1 ");
                java.nio.file.Files.writeString(hosts, "127.0.0.1 engines.kvtier.test\n127.0.0.2 engines.kvtier.test\n");
                awaitHealth(router, "2 of 2 ");
                // Both serve, and the map follows the new one's events: a prompt it cached is found there.
                String p = prompt(7);
                for (int i = 0; i < 2; i++) {
                    cached(router, p);
                }
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (at(Json.parse(router.post("/v1/kv/lookup", "{\"model\":\"sim-model\",\"token_ids\":" + p
                        + "}").body()), "engines", 0) == null) {
                    assertThat(System.nanoTime()).isLessThan(deadline);
                    Thread.sleep(20);
                }
                java.nio.file.Files.writeString(hosts, "127.0.0.2 engines.kvtier.test\n");
                awaitHealth(router, "1 of 1 ");
                assertThat(router.get("/metrics").body())
                        .contains("kvtier_router_engine_up{engine=\"127.0.0.2:" + port + "\"} 1.0")
                        .doesNotContain("kvtier_router_engine_up{engine=\"127.0.0.1:" + port + "\"}")
                        .doesNotContain("kvtier_map_event_gaps{engine=\"127.0.0.1:" + port + "\"}");
                java.nio.file.Files.writeString(hosts, "# nothing\n");
                Thread.sleep(1_000); // five resolutions that fail
                assertThat(router.get("/health").body()).as("a name that stops resolving keeps its engines")
                        .startsWith("1 of 1 ");
                assertThat(router.post("/v1/completions", "{\"model\":\"sim-model\",\"prompt\":" + p
                        + ",\"max_tokens\":2}").statusCode()).isEqualTo(200);
                assertThat(router.logText()).contains("DNS resolution failed").contains("removed");
            }
        } finally {
            for (HttpProcess sim : sims) {
                sim.close();
            }
        }
    }

    private static void awaitHealth(HttpProcess router, String prefix) throws Exception {
        long deadline = System.nanoTime() + 20_000_000_000L;
        String last = "";
        while (!(last = router.get("/health").body()).startsWith(prefix)) {
            assertThat(System.nanoTime()).as("health '%s' within 20 s; last '%s'", prefix, last).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** A port below the ephemeral range whose next port is free too (a node's --kv-events binds both). */
    private static int freePair() throws java.io.IOException {
        return io.kvtier.testkit.LocalPorts.freePair();
    }

    private static Object storeOf(HttpProcess router, String prompt) throws Exception {
        return at(Json.parse(router.post("/v1/kv/lookup", "{\"model\":\"sim-model\",\"token_ids\":" + prompt
                + "}").body()), "store");
    }

    /**
     * A kvtier node publishing store events, and the kvtier policy pricing each engine: the map follows the node
     * (LMCache chunk keys written, demoted to disk, deleted, the node killed and started again), and the same prompt
     * goes to the busy engine holding it in GPU memory while no one else can get it cheaper, and to an idle engine once
     * kvtier holds its chunks (a fetch at 4 GB/s instead of a 160-token prefill behind a queue).
     */
    @Test
    void theKvtierPolicyPricesTheStoresChunksAgainstLoad() throws Exception {
        int events = freePair();
        KvtierProcess node = KvtierProcess.start(dir.resolve("store-node"), "--memory", "16m", "--disk", "64m",
                "--kv-events", Integer.toString(events));
        try (HttpProcess router = router("kvtier", true, "--kvtier", "127.0.0.1:" + node.port()
                + ",events=tcp://127.0.0.1:" + events, "--lmcache-chunk-size", "16", "--prefill-rate", "1000",
                "--load-cost", "0.05", "--fetch-probe-interval", "200");
                redis.clients.jedis.Jedis jedis = node.jedis(5_000)) {
            String p = prompt(77);
            int[] tokens = IntStream.range(0, PROMPT).map(t -> 77 * 1000 + t).toArray();
            List<String> keys = new io.kvtier.kvcache.key.LmcacheChunkKeys("sim-model", 1, 0, "bfloat16", 16,
                    io.kvtier.kvcache.key.LmcacheChunkKeys.Algorithm.BUILTIN,
                    io.kvtier.kvcache.key.LmcacheChunkKeys.Algorithm.BUILTIN.seedZeroNoneHash()).keys(tokens);
            assertThat(keys).hasSize(10);
            assertThat(number(storeOf(router, p), "tokens")).isZero();

            // The prompt on one engine's GPU; that engine then busy with a long answer of its own.
            cached(router, p);
            String holder = awaitHolder(router, p);
            HttpProcess busy = engines.stream().filter(e -> holder.endsWith(":" + e.port())).findFirst().orElseThrow();
            Thread hog = Thread.ofVirtual().start(() -> {
                try {
                    busy.post("/v1/completions", "{\"model\":\"sim-model\",\"max_tokens\":3000,\"prompt\":[1,2,3]}");
                } catch (Exception e) {
                    // the answer itself does not matter
                }
            });
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!router.get("/metrics").body().contains("kvtier_router_engine_load{engine=\"" + holder
                    + "\"} 1.0")) {
                assertThat(System.nanoTime()).as("the router sees the holder busy within 10 s").isLessThan(deadline);
                Thread.sleep(50);
            }
            // Nothing in kvtier: a 160-token prefill elsewhere (0.16 s) costs more than one request queued (0.05 s).
            assertThat(cached(router, p)).as("the holder, busy as it is").isEqualTo(PROMPT - 16);

            // LMCache's chunks of the prompt in kvtier (kv_bytes and metadata, 64 KiB each): now any engine can fetch
            // them in well under a millisecond, and the idle ones win.
            byte[] chunk = new byte[64 << 10];
            for (String k : keys) {
                jedis.set((k + "kv_bytes").getBytes(StandardCharsets.UTF_8), chunk);
                jedis.set(k + "metadata", "m");
            }
            awaitStore(router, p, 160, "memory_tokens");
            String before = router.get("/metrics").body();
            assertThat(cached(router, p)).as("an idle engine, fetching from kvtier").isZero();
            assertThat(router.get("/metrics").body()).contains("reason=\"kvtier: store prefix\"");
            assertThat(before).doesNotContain("reason=\"kvtier: store prefix\"");

            // The router measures the node's memory fetch bandwidth: a chunk it holds, GET and timed.
            String memoryBandwidth = "kvtier_map_store_fetch_bandwidth_bytes_per_second{node=\"127.0.0.1:"
                    + node.port() + "\",tier=\"memory\"}";
            awaitMetric(router, memoryBandwidth);

            // kvtier map: the engines with their GPU blocks, the node with its chunks, and where this prompt is.
            Tools.Result map = Tools.run(java.time.Duration.ofSeconds(60), KvtierProcess.ROOT.resolve("kvtier")
                    .toString(), "map", "--router", "http://127.0.0.1:" + router.port(), "--model", "sim-model",
                    "--token-ids", p.substring(1, p.length() - 1));
            assertThat(map.exitCode()).as(map.stderr()).isZero();
            System.out.print(map.stdout());
            assertThat(map.stdout()).contains("policy kvtier").contains("GPU blocks").contains(holder)
                    .contains("kvtier node").containsPattern("127\\.0\\.0\\.1:\\d+ +10 +0 ")
                    .contains("prompt: 160 tokens of sim-model").contains("kvtier: 160 tokens (160 in memory, 0 on disk)");
            Tools.Result noModel = Tools.run(java.time.Duration.ofSeconds(60), KvtierProcess.ROOT.resolve("kvtier")
                    .toString(), "map", "--router", "http://127.0.0.1:" + router.port(), "--prompt", "hi");
            assertThat(noModel.exitCode()).isEqualTo(2);
            assertThat(noModel.stderr()).contains("give --model");

            // The map follows the node: demoted to disk (values written past its memory), a chunk deleted, the node
            // killed (entries dropped) and started again (a snapshot of what it recovered).
            // A second prompt no engine has seen, its chunks in kvtier too: demoted with the rest below.
            String q = prompt(78);
            List<String> qKeys = new io.kvtier.kvcache.key.LmcacheChunkKeys("sim-model", 1, 0, "bfloat16", 16,
                    io.kvtier.kvcache.key.LmcacheChunkKeys.Algorithm.BUILTIN,
                    io.kvtier.kvcache.key.LmcacheChunkKeys.Algorithm.BUILTIN.seedZeroNoneHash())
                    .keys(IntStream.range(0, PROMPT).map(t -> 78 * 1000 + t).toArray());
            for (String k : qKeys) {
                jedis.set((k + "kv_bytes").getBytes(StandardCharsets.UTF_8), chunk);
                jedis.set(k + "metadata", "m");
            }
            byte[] filler = new byte[1 << 20];
            for (int i = 0; i < 40; i++) {
                jedis.set(("filler" + i).getBytes(StandardCharsets.UTF_8), filler);
            }
            awaitStore(router, p, 160, "disk_tokens");
            awaitStore(router, q, 160, "disk_tokens");
            awaitMetric(router, memoryBandwidth.replace("memory", "disk"));

            // Prefetch on route: the engine chosen for q will load its 10 chunks from the node's disk, so the router
            // names them to the node (KVC.PREFETCH), which copies them to memory while the request goes on.
            cached(router, q);
            long prefetchDeadline = System.nanoTime() + 10_000_000_000L;
            while (!jedis.info("kvcache").contains("kvcache_prefetch_requested:10\r")) {
                assertThat(System.nanoTime()).as("KVC.PREFETCH of q's 10 chunks reaches the node within 10 s: %s",
                        jedis.info("kvcache")).isLessThan(prefetchDeadline);
                Thread.sleep(50);
            }
            assertThat(router.get("/metrics").body())
                    .contains("kvtier_router_prefetch_keys_total{outcome=\"sent\"} 10.0");
            jedis.del(keys.get(5) + "kv_bytes");
            awaitStore(router, p, 80, "tokens");
            node.kill();
            awaitStore(router, p, 0, "tokens");
            node.restart();
            awaitStore(router, p, 80, "disk_tokens");
            hog.join(10_000);
        } finally {
            node.close();
        }
    }

    /**
     * A node with a password asks for it on its store-event ports too: a subscriber without it gets no snapshot and
     * no batch, the router given it ({@code --kvtier-password}) follows the node's chunks and probes its bandwidth.
     */
    @Test
    void aNodesStoreEventsGoOnlyToSubscribersWithItsPassword() throws Exception {
        int events = freePair();
        KvtierProcess node = KvtierProcess.start(dir.resolve("store-node-auth"), "--memory", "16m", "--disk", "64m",
                "--requirepass", "s3cret", "--kv-events", Integer.toString(events));
        List<io.kvtier.events.StoreEventBatch> stranger = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (HttpProcess router = router("kvtier", true, "--kvtier", "127.0.0.1:" + node.port()
                + ",events=tcp://127.0.0.1:" + events, "--kvtier-password", "s3cret", "--lmcache-chunk-size", "16",
                "--fetch-probe-interval", "200");
                redis.clients.jedis.Jedis jedis = node.jedis(5_000);
                io.kvtier.events.EventSubscriber<io.kvtier.events.StoreEventBatch> noPassword =
                        new io.kvtier.events.EventSubscriber<>("stranger", "tcp://127.0.0.1:" + events,
                                "tcp://127.0.0.1:" + (events + 1), "", java.time.Duration.ofSeconds(1),
                                io.kvtier.events.StoreEventCodec::decode, true,
                                new io.kvtier.events.EventSubscriber.Listener<io.kvtier.events.StoreEventBatch>() {
                                    @Override
                                    public void batch(io.kvtier.events.StoreEventBatch batch) {
                                        stranger.add(batch);
                                    }

                                    @Override
                                    public void resync(String why) {
                                    }
                                }).start()) {
            String p = prompt(78);
            int[] tokens = IntStream.range(0, PROMPT).map(t -> 78 * 1000 + t).toArray();
            List<String> keys = new io.kvtier.kvcache.key.LmcacheChunkKeys("sim-model", 1, 0, "bfloat16", 16,
                    io.kvtier.kvcache.key.LmcacheChunkKeys.Algorithm.BUILTIN,
                    io.kvtier.kvcache.key.LmcacheChunkKeys.Algorithm.BUILTIN.seedZeroNoneHash()).keys(tokens);
            byte[] chunk = new byte[64 << 10];
            for (String k : keys) {
                jedis.set((k + "kv_bytes").getBytes(StandardCharsets.UTF_8), chunk);
                jedis.set(k + "metadata", "m");
            }
            awaitStore(router, p, 160, "memory_tokens");
            awaitMetric(router, "kvtier_map_store_fetch_bandwidth_bytes_per_second{node=\"127.0.0.1:" + node.port()
                    + "\",tier=\"memory\"}");
            jedis.del(keys.get(5) + "kv_bytes");
            awaitStore(router, p, 80, "tokens");
            assertThat(stranger).as("batches a subscriber without the password got").isEmpty();
            assertThat(noPassword.stats().snapshots()).isZero();
            assertThat(noPassword.stats().batches()).isZero();
        } finally {
            node.close();
        }
    }

    /** Waits until the router's metrics show {@code series} with a positive value. */
    private static void awaitMetric(HttpProcess router, String series) throws Exception {
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (true) {
            String metrics = router.get("/metrics").body();
            int at = metrics.indexOf(series + " ");
            if (at >= 0) {
                String value = metrics.substring(at + series.length() + 1).lines().findFirst().orElse("0");
                assertThat(Double.parseDouble(value)).as(series).isPositive();
                return;
            }
            assertThat(System.nanoTime()).as("%s within 15 s", series).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static void awaitStore(HttpProcess router, String prompt, int tokens, String field) throws Exception {
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (true) {
            Object store = storeOf(router, prompt);
            if (number(store, field) == tokens) {
                return;
            }
            assertThat(System.nanoTime()).as("store %s %d within 15 s: %s", field, tokens, store).isLessThan(deadline);
            Thread.sleep(50);
        }
    }
}
