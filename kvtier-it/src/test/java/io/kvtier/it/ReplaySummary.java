package io.kvtier.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The JSON line {@code lmcache_connector_replay.py} prints, and the facts every run of it must show: what the
 * connector sent (per command), what it found, and that every chunk came back byte for byte.
 */
record ReplaySummary(String json) {
    /** Full chunks of the TP 1 engine, its unfull chunk, and full chunks per TP 2 worker (the script's defaults). */
    static final int TP1_CHUNKS = 4 + 1;
    static final int TP2_CHUNKS = 3;
    static final int STORED = TP1_CHUNKS + 2 * TP2_CHUNKS;

    /** Runs the script with /usr/bin/python3 (Debian's python3-redis) and checks it exited 0. */
    static ReplaySummary run(Path script, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/python3", script.toString()));
        cmd.addAll(List.of(args));
        Tools.Result r = Tools.run(Duration.ofMinutes(2), null, cmd);
        String line = r.stdout().strip();
        assertThat(r.exitCode()).as("exit code; stdout %s; stderr %s", line, r.stderr()).isZero();
        assertThat(line).as("no errors").contains("\"errors\": []");
        return new ReplaySummary(line);
    }

    /**
     * The connector's command counts, lookups and round trips for the script's scenario. With {@code companionFate}
     * (a single node) the metadata of the chunk whose kv_bytes was deleted is gone too, so the connector's GET of it
     * misses and its own cleanup (GET kv_bytes, DEL metadata) never runs; in a cluster the halves live on different
     * nodes and the connector cleans up as it does with Redis.
     */
    void assertConnectorSequence(boolean companionFate) {
        assertThat(field("mismatches")).isZero();
        assertThat(field("puts_ok")).isEqualTo(STORED);
        assertThat(json).contains("\"chunk_bytes\": [13107200, 16777216, 33554432]");
        assertThat(json).contains("\"key_example\": \"meta-llama/Llama-3.1-8B-Instruct@1@0@");
        long written = field("bytes_written");
        assertThat(written).isEqualTo(4L * 33554432 + 13107200 + 2 * 3L * 16777216);
        assertThat(field("bytes_read")).isEqualTo(written);
        // prefix walks: each worker's stored chunks then the first unknown; one that misses at once
        assertThat(json).contains("\"prefix_hits\": [" + TP1_CHUNKS + ", " + TP2_CHUNKS + ", " + TP2_CHUNKS + "]");
        assertThat(field("miss_first_hits")).isZero();
        // the lost kv_bytes: GET metadata hits, GET kv_bytes is nil, DEL metadata (companion fate: GET metadata
        // is nil), and the prefix stops there
        assertThat(field("evicted_kv_bytes_deleted")).isEqualTo(1);
        assertThat(json).contains("\"orphan_get\": \"miss\"");
        assertThat(field("orphan_metadata_left")).isZero();
        assertThat(field("prefix_after_loss")).isEqualTo(TP1_CHUNKS / 2);
        assertThat(json).contains("\"calls\": {\"DEL\": " + (companionFate ? 0 : 1) + ", \"EXISTS\": " + exists()
                + ", \"GET\": " + (2 * STORED + (companionFate ? 1 : 2)) + ", \"SET\": " + 2 * STORED + "}");
        assertThat(field("max_in_flight")).as("concurrent calls on one worker's pool").isGreaterThan(1)
                .isLessThanOrEqualTo(150);
    }

    /** EXISTS sent: each walk stops after its first miss. */
    private static int exists() {
        int walks = (TP1_CHUNKS + 1) + 2 * (TP2_CHUNKS + 1);
        return walks + 1 + (TP1_CHUNKS / 2 + 1);
    }

    long field(String name) {
        Matcher m = Pattern.compile("\"" + name + "\": (\\d+)").matcher(json);
        assertThat(m.find()).as("summary has %s: %s", name, json).isTrue();
        return Long.parseLong(m.group(1));
    }
}
