package io.kvtier.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.events.EventSubscriber;
import io.kvtier.router.events.KvEventBatch;
import io.kvtier.router.events.VllmEventCodec;
import io.kvtier.router.map.EngineFeed;
import io.kvtier.router.map.KvCacheMap;
import io.kvtier.router.tokens.ChatTemplate;
import io.kvtier.router.tokens.Tokenizer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The engine emulator over real HTTP and real ZMQ: what it reports as cached in its answers ({@code cached_tokens}) is
 * what its KV events, followed by a subscriber into the map, say it holds.
 */
class EngineSimTest {
    private static final String MODEL = "sim-model";
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private JsonNode post(EngineSim sim, String path, String body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sim.port() + path))
                .timeout(Duration.ofSeconds(10)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode json = JSON.readTree(r.body());
        return r.statusCode() == 200 ? json : JSON.createObjectNode().put("status", r.statusCode())
                .put("message", json.path("error").path("message").asText());
    }

    private static String tokens(int from, int n) {
        return IntStream.range(from, from + n).mapToObj(Integer::toString).reduce((a, b) -> a + "," + b).orElseThrow();
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition within 10 s").isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    @Test
    void whatItsEventsSayItHoldsIsWhatItServesFromCache() throws Exception {
        KvCacheMap map = new KvCacheMap();
        map.addEngine("sim", MODEL);
        EngineFeed feed = new EngineFeed(map, "sim");
        try (EngineSim sim = new EngineSim(EngineSimOptions.forTest(MODEL, 64), Tokenizer.bytes(), ChatTemplate.builtin());
                EventSubscriber<KvEventBatch> sub = new EventSubscriber<>("sim", "tcp://127.0.0.1:" + sim.eventsPort(),
                        "tcp://127.0.0.1:" + sim.replayPort(), "", Duration.ofSeconds(2), VllmEventCodec::decode, false,
                        new EventSubscriber.Listener<KvEventBatch>() {
                            @Override
                            public void batch(KvEventBatch batch) {
                                feed.apply(batch);
                            }

                            @Override
                            public void resync(String why) {
                                map.cleared("sim");
                            }
                        }).start()) {
            // 100 tokens: 6 full blocks of 16 cached once computed; the same prompt again hits 96 tokens.
            String prompt = "{\"model\":\"sim-model\",\"max_tokens\":4,\"prompt\":[" + tokens(1000, 100) + "]}";
            JsonNode first = post(sim, "/v1/completions", prompt);
            assertThat(first.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt()).isZero();
            int[] ids = IntStream.range(1000, 1100).toArray();
            await(() -> !map.lookup(MODEL, null, ids).isEmpty());
            assertThat(map.lookup(MODEL, null, ids)).containsExactly(
                    new KvCacheMap.EnginePrefix("sim", 16, Map.of("GPU", 96)));
            JsonNode second = post(sim, "/v1/completions", prompt);
            assertThat(second.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt()).isEqualTo(96);
            assertThat(second.path("choices").get(0).path("text").asText()).isNotEmpty();

            // A pool of 64 blocks: other prompts push the first one out, and the map follows the evictions.
            for (int p = 0; p < 8; p++) {
                post(sim, "/v1/completions", "{\"model\":\"sim-model\",\"max_tokens\":4,\"prompt\":["
                        + tokens(5000 + 1000 * p, 160) + "]}");
            }
            await(() -> map.lookup(MODEL, null, ids).isEmpty());
            JsonNode third = post(sim, "/v1/completions", prompt);
            assertThat(third.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt()).isZero();
            assertThat(map.stats().get(0).orphans()).isZero();
            assertThat(sub.stats().resyncs()).isZero();
        }
    }

    @Test
    void servesTheOpenAiApiVllmServes() throws Exception {
        try (EngineSim sim = new EngineSim(EngineSimOptions.forTest(MODEL, 64), Tokenizer.bytes(), ChatTemplate.builtin())) {
            JsonNode chat = post(sim, "/v1/chat/completions", "{\"model\":\"sim-model\",\"max_tokens\":3,"
                    + "\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},{\"role\":\"user\",\"content\":\"hi\"}]}");
            assertThat(chat.path("object").asText()).isEqualTo("chat.completion");
            assertThat(chat.path("choices").get(0).path("message").path("content").asText()).isEqualTo("lorem ipsum dolor ");
            assertThat(chat.path("usage").path("completion_tokens").asInt()).isEqualTo(3);
            assertThat(chat.path("usage").path("prompt_tokens").asInt())
                    .isEqualTo("<|system|>\nbe brief\n<|user|>\nhi\n<|assistant|>\n".length());

            HttpResponse<String> stream = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + sim.port() + "/v1/completions")).POST(
                    HttpRequest.BodyPublishers.ofString("{\"model\":\"sim-model\",\"max_tokens\":2,\"stream\":true,"
                            + "\"stream_options\":{\"include_usage\":true},\"prompt\":\"hello\"}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(stream.headers().firstValue("content-type")).hasValue("text/event-stream");
            List<String> events = List.of(stream.body().split("\n\n"));
            assertThat(events).last().isEqualTo("data: [DONE]");
            // one event per token, or several tokens in one when the writer falls behind the steps (as vLLM's)
            StringBuilder text = new StringBuilder();
            for (String e : events.subList(0, events.size() - 2)) {
                text.append(JSON.readTree(e.substring(6)).path("choices").get(0).path("text").asText());
            }
            assertThat(text.toString()).isEqualTo("lorem ipsum ");
            assertThat(JSON.readTree(events.get(events.size() - 2).substring(6)).path("usage").path("completion_tokens")
                    .asInt()).isEqualTo(2);

            assertThat(post(sim, "/v1/completions", "{\"model\":\"other\",\"prompt\":\"x\"}").path("status").asInt())
                    .isEqualTo(404);
            assertThat(post(sim, "/v1/completions", "{\"model\":\"sim-model\",\"prompt\":{}}").path("message").asText())
                    .contains("prompt must be");
            assertThat(post(sim, "/v1/completions", "{\"model\":\"sim-model\",\"max_tokens\":1,\"prompt\":["
                    + tokens(0, 2000) + "]}").path("message").asText()).contains("longer than");

            String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sim.port()
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(metrics).contains("vllm:num_requests_running{model_name=\"sim-model\"} 0")
                    .contains("vllm:num_requests_waiting{model_name=\"sim-model\"} 0");
            String models = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + sim.port()
                    + "/v1/models")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(JSON.readTree(models).path("data").get(0).path("id").asText()).isEqualTo("sim-model");
        }
    }
}
