package io.kvtier.cli.simulate;

import io.kvtier.common.Json;
import io.kvtier.kvcache.simulate.BlockTrace;
import io.kvtier.kvcache.simulate.ChunkOptions;
import io.kvtier.kvcache.simulate.ChunkedTrace;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The JSONL formats {@code --trace} reads, told apart by the first request (the first non-blank line): an object
 * with {@code hash_ids} is Mooncake's, anything else kvtier's chat format, whose reader then names what is wrong.
 * Each format has the chunk size it implies when {@code --chunk-tokens} is not given.
 */
enum TraceFormat {
    /** kvtier's: sessions and turns ({@link TraceFile}); LMCache's default chunks. */
    CHAT(ChunkOptions.LMCACHE_CHUNK_TOKENS),
    /** Mooncake's: block ids ({@link MooncakeTraceFile}); its traces' blocks. */
    MOONCAKE(BlockTrace.MOONCAKE_BLOCK_TOKENS);

    final int defaultChunkTokens;

    TraceFormat(int defaultChunkTokens) {
        this.defaultChunkTokens = defaultChunkTokens;
    }

    static TraceFormat of(Path file) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return detect(in);
        }
    }

    /** The format of the trace {@code in} holds, read up to its first non-blank line. */
    static TraceFormat detect(BufferedReader in) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.isBlank()) {
                return ofLine(line);
            }
        }
        return CHAT;
    }

    private static TraceFormat ofLine(String line) {
        try {
            return Json.parse(line) instanceof Map<?, ?> o && o.containsKey("hash_ids") ? MOONCAKE : CHAT;
        } catch (IllegalArgumentException badJson) {
            return CHAT; // reading it names the line and what is wrong with it, as for any line
        }
    }

    /** Reads a whole trace of this format; {@code chunkTokens} is a Mooncake block's size. */
    ChunkedTrace read(Reader in, String name, int chunkTokens) throws IOException {
        return switch (this) {
            case CHAT -> TraceFile.read(in, name);
            case MOONCAKE -> MooncakeTraceFile.read(in, name, chunkTokens);
        };
    }
}
