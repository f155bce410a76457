package io.kvtier.cli.router;

import io.kvtier.common.Columns;
import io.kvtier.common.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kvtier map}: a router's KV-cache map for people (its {@code GET /v1/kv/map}), and with a prompt, where that
 * prompt's prefix is ({@code POST /v1/kv/lookup}).
 */
@Command(name = "map", mixinStandardHelpOptions = true,
        description = {"Shows a running router's KV-cache map: each engine's health, load and blocks per medium, each "
                + "kvtier node's chunks per tier, and the event streams behind them. With --prompt, --token-ids or "
                + "--messages, also where that prompt's prefix is: per engine and per kvtier node and tier.",
                "Example: kvtier map --router http://127.0.0.1:8080 --model meta-llama/Llama-3.1-8B-Instruct "
                        + "--prompt 'You are a helpful assistant.'"})
public final class MapCommand implements Callable<Integer> {
    @Option(names = "--router", defaultValue = "http://127.0.0.1:8080", paramLabel = "URL",
            description = "The router (default: ${DEFAULT-VALUE}).")
    String router;

    @Option(names = "--model", description = "The model of the prompt looked up (needed with a prompt).")
    String model;

    @Option(names = "--prompt", paramLabel = "TEXT", description = "A completion prompt to look up.")
    String prompt;

    @Option(names = "--token-ids", split = ",", paramLabel = "ID", description = "A prompt as token ids, comma-separated.")
    List<Integer> tokenIds;

    @Option(names = "--messages", paramLabel = "JSON",
            description = "A chat to look up: its messages as a JSON array, rendered with the router's chat template.")
    String messages;

    @Option(names = "--json", description = "Print the router's answers as JSON instead of tables.")
    boolean json;

    @Option(names = "--timeout", defaultValue = "5000", paramLabel = "MS",
            description = "Limit on each call to the router, in milliseconds (default: ${DEFAULT-VALUE}).")
    long timeoutMillis;

    @Override
    public Integer call() throws Exception {
        int prompts = (prompt != null ? 1 : 0) + (tokenIds != null ? 1 : 0) + (messages != null ? 1 : 0);
        if (prompts > 1) {
            throw new IllegalArgumentException("give one of --prompt, --token-ids, --messages");
        }
        if (prompts == 1 && model == null) {
            throw new IllegalArgumentException("a prompt is looked up for a model: give --model");
        }
        String base = router.endsWith("/") ? router.substring(0, router.length() - 1) : router;
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(timeoutMillis)).build();
        Object map = Json.parse(call(http, HttpRequest.newBuilder(URI.create(base + "/v1/kv/map")).GET()));
        Object lookup = null;
        if (prompts == 1) {
            Map<String, Object> q = new java.util.LinkedHashMap<>();
            q.put("model", model);
            if (prompt != null) {
                q.put("prompt", prompt);
            } else if (tokenIds != null) {
                q.put("token_ids", tokenIds);
            } else {
                q.put("messages", Json.parse(messages));
            }
            lookup = Json.parse(call(http, HttpRequest.newBuilder(URI.create(base + "/v1/kv/lookup"))
                    .POST(HttpRequest.BodyPublishers.ofString(Json.write(q)))));
        }
        if (json) {
            System.out.println(Json.write(lookup == null ? Json.object("map", map)
                    : Json.object("map", map, "lookup", lookup)));
        } else {
            System.out.print(format(base, map, lookup));
        }
        return 0;
    }

    private String call(HttpClient http, HttpRequest.Builder request) throws IOException, InterruptedException {
        HttpResponse<String> r;
        try {
            r = http.sendAsync(request.timeout(Duration.ofMillis(timeoutMillis)).build(),
                    HttpResponse.BodyHandlers.ofString()).get(timeoutMillis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IOException("the router at " + router + " did not answer within " + timeoutMillis + " ms");
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IOException("cannot reach the router at " + router + ": " + e.getCause());
        }
        if (r.statusCode() != 200) {
            throw new IllegalArgumentException("the router answered " + r.statusCode() + ": " + r.body().strip());
        }
        return r.body();
    }

    /** The tables: a pure function of the router's two answers ({@code lookup} may be null). */
    static String format(String router, Object map, Object lookup) {
        StringBuilder b = new StringBuilder();
        b.append("kvtier router ").append(router).append(" (policy ").append(text(at(map, "policy"))).append(")\n\n");
        List<?> engines = list(at(map, "engines"));
        TreeSet<String> media = new TreeSet<>();
        for (Object e : engines) {
            map(at(e, "blocks")).keySet().forEach(k -> media.add(String.valueOf(k)));
        }
        media.add("GPU");
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("engine", "model", "up", "load", "block"));
        media.forEach(m -> header.add(m + " blocks"));
        header.addAll(List.of("events", "batches", "gaps", "resyncs"));
        rows.add(header.toArray(String[]::new));
        for (Object e : engines) {
            List<String> row = new ArrayList<>(List.of(text(at(e, "engine")), text(at(e, "model")),
                    Boolean.TRUE.equals(at(e, "healthy")) ? "yes" : "NO", number(at(e, "load")),
                    number(at(e, "block_size"))));
            media.forEach(m -> row.add(number(at(e, "blocks", m), "0")));
            Object ev = at(e, "events");
            row.add(ev != null ? "followed" : Boolean.TRUE.equals(at(e, "events_followed")) ? "waiting" : "none");
            row.add(number(at(ev, "batches"), "-"));
            row.add(number(at(ev, "gaps"), "-"));
            row.add(number(at(ev, "resyncs"), "-"));
            rows.add(row.toArray(String[]::new));
        }
        boolean[] right = new boolean[header.size()];
        for (int i = 3; i < right.length; i++) {
            right[i] = i != 5 + media.size();
        }
        if (engines.isEmpty()) {
            b.append("  no engines\n");
        } else {
            Columns.append(b, rows, right);
        }
        Object store = at(map, "store");
        if (store != null) {
            b.append('\n');
            List<String[]> nodes = new ArrayList<>();
            nodes.add(new String[] {"kvtier node", "memory chunks", "disk chunks", "memory MB/s", "disk MB/s",
                "lag s", "batches", "snapshots", "resyncs"});
            for (Object n : list(at(store, "nodes"))) {
                nodes.add(new String[] {text(at(n, "node")), number(at(n, "memory_chunks")),
                        number(at(n, "disk_chunks")), megabytes(at(n, "fetch_bytes_per_second", "memory")),
                        megabytes(at(n, "fetch_bytes_per_second", "disk")), String.format(Locale.ROOT, "%.2f",
                        at(n, "lag_seconds") instanceof BigDecimal d ? d.doubleValue() : 0.0),
                        number(at(n, "events", "batches"), "-"), number(at(n, "events", "snapshots"), "-"),
                        number(at(n, "events", "resyncs"), "-")});
            }
            Columns.append(b, nodes, new boolean[] {false, true, true, true, true, true, true, true, true});
            b.append("  (chunks of ").append(number(at(store, "chunk_tokens"))).append(" tokens; MB/s: fetch bandwidth"
                    + " measured, - before a first sample)\n");
        }
        if (lookup != null) {
            b.append('\n').append("prompt: ").append(number(at(lookup, "prompt_tokens"))).append(" tokens of ")
                    .append(text(at(lookup, "model"))).append('\n');
            List<?> held = list(at(lookup, "engines"));
            if (held.isEmpty()) {
                b.append("  no engine holds a prefix of it\n");
            } else {
                List<String[]> p = new ArrayList<>();
                List<String> h = new ArrayList<>(List.of("engine"));
                media.forEach(m -> h.add(m + " tokens"));
                p.add(h.toArray(String[]::new));
                for (Object e : held) {
                    List<String> row = new ArrayList<>(List.of(text(at(e, "engine"))));
                    media.forEach(m -> row.add(number(at(e, "tokens", m), "0")));
                    p.add(row.toArray(String[]::new));
                }
                boolean[] r = new boolean[h.size()];
                java.util.Arrays.fill(r, 1, r.length, true);
                Columns.append(b, p, r);
            }
            Object s = at(lookup, "store");
            if (s != null) {
                b.append(String.format(Locale.ROOT, "  kvtier: %s tokens (%s in memory, %s on disk), %s bytes%n",
                        number(at(s, "tokens")), number(at(s, "memory_tokens")), number(at(s, "disk_tokens")),
                        number(at(s, "bytes"))));
                for (Object n : list(at(s, "nodes"))) {
                    b.append(String.format(Locale.ROOT, "    %s: %s tokens in memory, %s on disk%n",
                            text(at(n, "node")), number(at(n, "memory_tokens")), number(at(n, "disk_tokens"))));
                }
            }
        }
        return b.toString();
    }

    private static Object at(Object tree, String... path) {
        for (String k : path) {
            if (!(tree instanceof Map<?, ?> m)) {
                return null;
            }
            tree = m.get(k);
        }
        return tree;
    }

    private static List<?> list(Object o) {
        return o instanceof List<?> l ? l : List.of();
    }

    private static Map<?, ?> map(Object o) {
        return o instanceof Map<?, ?> m ? m : Map.of();
    }

    private static String text(Object o) {
        return o == null ? "-" : o.toString();
    }

    private static String megabytes(Object o) {
        return o instanceof BigDecimal d ? String.format(Locale.ROOT, "%,.0f", d.doubleValue() / 1e6) : "-";
    }

    private static String number(Object o) {
        return number(o, "-");
    }

    private static String number(Object o, String none) {
        if (!(o instanceof BigDecimal d)) {
            return none;
        }
        return d.stripTrailingZeros().scale() <= 0 ? String.format(Locale.ROOT, "%,d", d.longValue())
                : String.format(Locale.ROOT, "%.1f", d.doubleValue());
    }
}
