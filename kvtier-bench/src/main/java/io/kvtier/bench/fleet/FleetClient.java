package io.kvtier.bench.fleet;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends completion requests to vLLM's OpenAI API ({@code POST <base>/v1/completions}, the prompt as token ids,
 * {@code ignore_eos} so that every answer has {@code max_tokens} tokens, streamed with usage) and times them from
 * the server-sent events: sent just before the request goes out, first token at the first event whose
 * {@code choices[0].text} is not empty, end at {@code data: [DONE]} (or the end of the stream). One base is a router;
 * several are engines reached directly, used in turn or, with a seed, picked at random as a Kubernetes Service
 * spreads them (in turn, a fixed number of chat users would each land on one engine every round: an affinity no
 * plain load balancer gives).
 *
 * <p>Each request runs on its own virtual thread, bounded as a whole (headers and body) by the timeout: a watchdog
 * interrupts it, which aborts the exchange. Futures never complete exceptionally: HTTP errors, timeouts, refused
 * connections and error events in the stream all become a {@link RequestResult} with an error. At most
 * {@code maxInFlight} requests run at once; one more completes at once with an error rather than blocking the
 * pacer that sends it (an open-loop pacer that blocked would hide the overload it measures). Thread-safe.
 */
public final class FleetClient implements RequestSender, AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<URI> endpoints;
    private final String model;
    private final Duration timeout;
    private final int maxInFlight;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final ScheduledThreadPoolExecutor watchdogs;
    private final HttpClient http;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong sent = new AtomicLong();
    private final java.util.Random picker;

    /** Bases used in turn. See {@link #FleetClient(List, String, Duration, int, java.util.Random)}. */
    public FleetClient(List<URI> baseUrls, String model, Duration timeout, int maxInFlight) {
        this(baseUrls, model, timeout, maxInFlight, null);
    }

    /**
     * @param baseUrls    where the API is: {@code http://host:port} (or with a path prefix), without {@code /v1}
     * @param model       the {@code model} member of every request: the name the engines serve
     * @param timeout     the most one request may take, connecting, waiting and streaming together
     * @param maxInFlight the most requests running at once
     * @param picker      picks each request's base at random; null: in turn
     */
    public FleetClient(List<URI> baseUrls, String model, Duration timeout, int maxInFlight, java.util.Random picker) {
        Objects.requireNonNull(baseUrls, "baseUrls");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(timeout, "timeout");
        if (baseUrls.isEmpty()) {
            throw new IllegalArgumentException("the client needs at least one base URL");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("request timeout " + timeout + " must be positive");
        }
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("requests in flight " + maxInFlight + " must be at least 1");
        }
        this.endpoints = baseUrls.stream().map(FleetClient::completions).toList();
        this.model = model;
        this.timeout = timeout;
        this.maxInFlight = maxInFlight;
        this.picker = picker;
        this.watchdogs = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().daemon().name("fleet-watchdog")
                .factory());
        watchdogs.setRemoveOnCancelPolicy(true);
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(threads)
                .connectTimeout(timeout).build();
    }

    private static URI completions(URI base) {
        Objects.requireNonNull(base, "base URL");
        String scheme = base.getScheme();
        if (!("http".equals(scheme) || "https".equals(scheme)) || base.getHost() == null) {
            throw new IllegalArgumentException("base URL " + base + " must be http://host:port or https://host:port");
        }
        String s = base.toString();
        return URI.create((s.endsWith("/") ? s.substring(0, s.length() - 1) : s) + "/v1/completions");
    }

    /** Requests running now. */
    public int inFlight() {
        return inFlight.get();
    }

    @Override
    public CompletableFuture<RequestResult> send(FleetRequest request) {
        Objects.requireNonNull(request, "request");
        if (inFlight.incrementAndGet() > maxInFlight) {
            inFlight.decrementAndGet();
            return CompletableFuture.completedFuture(
                    refused(request, "client: too many requests in flight (" + maxInFlight + ")"));
        }
        long n = sent.getAndIncrement();
        URI uri = endpoints.get(picker == null ? (int) Math.floorMod(n, (long) endpoints.size())
                : picker.nextInt(endpoints.size()));
        CompletableFuture<RequestResult> answer = new CompletableFuture<>();
        try {
            threads.execute(() -> answer.complete(done(exchange(uri, request))));
        } catch (RejectedExecutionException e) {
            answer.complete(done(refused(request, "client: closed")));
        }
        return answer;
    }

    /** Counts the request out before its future completes, so that whoever the completion wakes may send again. */
    private RequestResult done(RequestResult result) {
        inFlight.decrementAndGet();
        return result;
    }

    private static RequestResult refused(FleetRequest request, String why) {
        long now = System.nanoTime();
        return new RequestResult(request, now, now, now, 0, 0, 0, why);
    }

    /** One request, start to end, on the calling (virtual) thread; returns what happened, never throws. */
    private RequestResult exchange(URI uri, FleetRequest request) {
        try {
            return timedExchange(uri, request);
        } catch (RuntimeException e) {
            return refused(request, "client: " + describe(e));
        }
    }

    private RequestResult timedExchange(URI uri, FleetRequest request) {
        HttpRequest post = HttpRequest.newBuilder(uri).timeout(timeout)
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body(request))).build();
        Thread self = Thread.currentThread();
        AtomicBoolean timedOut = new AtomicBoolean();
        Answer answer = new Answer(request, System.nanoTime());
        ScheduledFuture<?> watchdog = watchdogs.schedule(() -> {
            timedOut.set(true);
            self.interrupt();
        }, timeout.toNanos(), TimeUnit.NANOSECONDS);
        try {
            HttpResponse<InputStream> response = http.send(post, HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = response.body()) {
                if (response.statusCode() != 200) {
                    return answer.failed("HTTP " + response.statusCode() + ": " + errorMessage(in.readAllBytes()),
                            System.nanoTime());
                }
                read(in, answer);
            }
            return answer.result(System.nanoTime());
        } catch (HttpTimeoutException e) {
            return answer.failed(timeoutMessage(), System.nanoTime());
        } catch (IOException | InterruptedException e) {
            return answer.failed(timedOut.get() ? timeoutMessage() : "client: " + describe(e), System.nanoTime());
        } catch (RuntimeException e) {
            return answer.failed("client: " + describe(e), System.nanoTime());
        } finally {
            watchdog.cancel(false);
            Thread.interrupted(); // a watchdog that fired as the request ended: this thread's task is over
        }
    }

    /** Feeds the event lines to {@code answer}; after {@code [DONE]}, reads to the end so the connection is reused. */
    private static void read(InputStream in, Answer answer) throws IOException {
        BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        while ((line = lines.readLine()) != null) {
            if (!answer.done) {
                answer.line(line, System.nanoTime());
            }
        }
    }

    private byte[] body(FleetRequest r) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(r.prompt().length * 6 + 200);
        try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("model", model);
            g.writeFieldName("prompt");
            g.writeArray(r.prompt(), 0, r.prompt().length);
            g.writeNumberField("max_tokens", r.maxTokens());
            g.writeBooleanField("ignore_eos", true);
            g.writeBooleanField("stream", true);
            g.writeObjectFieldStart("stream_options");
            g.writeBooleanField("include_usage", true);
            g.writeEndObject();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return out.toByteArray();
    }

    private String timeoutMessage() {
        return "timeout: no complete answer within " + timeout.toMillis() + " ms";
    }

    /** The message of an OpenAI error body: {@code {"error": {"message"}}}, or vLLM's older top-level one. */
    static String errorMessage(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8).strip();
        try {
            JsonNode o = JSON.readTree(text);
            JsonNode message = o.path("error").isObject() ? o.path("error").path("message") : o.path("message");
            if (message.isTextual()) {
                return message.asText();
            }
        } catch (IOException | RuntimeException e) {
            // not JSON: the text itself, below
        }
        return text.length() <= 300 ? text : text.substring(0, 300) + "...";
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getClass().getSimpleName() + ": "
                + e.getMessage();
    }

    /** Ends in-flight requests (their futures complete with errors) and frees the threads and connections. */
    @Override
    public void close() {
        http.shutdownNow();
        threads.shutdownNow();
        watchdogs.shutdownNow();
    }

    /**
     * What the stream said so far, event by event. vLLM sends one {@code data:} line per event: one per engine step
     * with the new text in {@code choices[0].text}, then (with {@code include_usage}) one with {@code "choices": []}
     * and the usage, then {@code [DONE]}; an error after the stream started comes as an event with {@code error}.
     * Owned by one request's thread.
     */
    private static final class Answer {
        private final FleetRequest request;
        private final long sentNanos;
        private long firstChoiceNanos;
        private long firstTextNanos;
        private long endNanos;
        private int textEvents;
        private int promptTokens = -1;
        private int completionTokens = -1;
        private int cachedTokens;
        private String error;
        boolean done;

        Answer(FleetRequest request, long sentNanos) {
            this.request = request;
            this.sentNanos = sentNanos;
        }

        void line(String line, long now) {
            if (!line.startsWith("data:")) {
                return; // blank separators, comments, event names
            }
            String data = line.substring(5).strip();
            if (data.equals("[DONE]")) {
                endNanos = now;
                done = true;
                return;
            }
            JsonNode event;
            try {
                event = JSON.readTree(data);
            } catch (IOException e) {
                failed("client: an event is not JSON: " + abbreviate(data), now);
                return;
            }
            if (event.path("error").isObject() || "error".equals(event.path("object").asText())) {
                JsonNode e = event.path("error").isObject() ? event.path("error") : event;
                failed("stream: " + e.path("message").asText("error event " + abbreviate(data)), now);
                return;
            }
            choice(event.path("choices"), now);
            usage(event.path("usage"));
        }

        private void choice(JsonNode choices, long now) {
            if (!choices.isArray() || choices.isEmpty()) {
                return;
            }
            if (firstChoiceNanos == 0) {
                firstChoiceNanos = now;
            }
            if (!choices.get(0).path("text").asText("").isEmpty()) {
                textEvents++;
                if (firstTextNanos == 0) {
                    firstTextNanos = now;
                }
            }
        }

        private void usage(JsonNode usage) {
            if (usage.isObject()) {
                promptTokens = usage.path("prompt_tokens").asInt(promptTokens);
                completionTokens = usage.path("completion_tokens").asInt(completionTokens);
                // vLLM leaves prompt_tokens_details out when nothing was cached (or without --enable-prompt-tokens-details)
                cachedTokens = usage.path("prompt_tokens_details").path("cached_tokens").asInt(0);
            }
        }

        RequestResult failed(String why, long now) {
            if (error == null) {
                error = why;
            }
            done = true;
            if (endNanos == 0) {
                endNanos = now;
            }
            return result(now);
        }

        /**
         * The result. Without usage, the prompt's length and the events with text stand in for the token counts;
         * without an event with text, the first event with a choice stands in for the first token, and without
         * any, the end (and the request failed unless it failed otherwise).
         */
        RequestResult result(long now) {
            long end = endNanos == 0 ? now : endNanos;
            long first = firstTextNanos != 0 ? firstTextNanos : firstChoiceNanos != 0 ? firstChoiceNanos : end;
            String why = error;
            if (why == null && firstChoiceNanos == 0) {
                why = "stream: the answer ended without tokens";
            }
            return new RequestResult(request, sentNanos, first, end,
                    promptTokens >= 0 ? promptTokens : request.prompt().length,
                    completionTokens >= 0 ? completionTokens : textEvents, cachedTokens, why);
        }

        private static String abbreviate(String s) {
            return s.length() <= 200 ? s : s.substring(0, 200) + "...";
        }
    }
}
