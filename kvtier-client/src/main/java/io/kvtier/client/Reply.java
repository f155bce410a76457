package io.kvtier.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A server reply, RESP2 or RESP3. Immutable, except that a {@link Bulk} holds a reference-counted buffer which the
 * receiver of the reply owns: pass every reply to {@link #release(Reply)} when done with it (a no-op without bulks).
 * Text is decoded as UTF-8.
 */
public sealed interface Reply {
    /** {@code +text}, e.g. {@code OK} or {@code PONG}. */
    record Simple(String text) implements Reply {
    }

    /** {@code -message} (or RESP3 blob error {@code !}), without the leading '-', e.g. {@code "ERR unknown ..."}. */
    record Error(String message) implements Reply {
    }

    /** {@code :value}. */
    record Int(long value) implements Reply {
    }

    /** {@code $len} with its payload in {@code content}, owned by the receiver: release it ({@link Reply#release}). */
    record Bulk(ByteBuf content) implements Reply {
        /** A copy of the payload; does not release. */
        public byte[] bytes() {
            return ByteBufUtil.getBytes(content);
        }

        /** The payload decoded as UTF-8; does not release. */
        public String utf8() {
            return content.toString(StandardCharsets.UTF_8);
        }
    }

    /** RESP2 {@code $-1} and {@code *-1}, RESP3 {@code _}. */
    record Null() implements Reply {
    }

    /**
     * {@code *} array, {@code ~} set, {@code >} push, or {@code %} map flattened into key, value, key, value, ....
     * The elements list is unmodifiable.
     */
    record Aggregate(char type, List<Reply> elements) implements Reply {
    }

    /** RESP3 {@code ,} double, {@code #} boolean ("t"/"f"), {@code (} big number, {@code =} verbatim ("txt:..."). */
    record Other(char type, String text) implements Reply {
    }

    /**
     * Releases every {@link Bulk} in {@code reply}, recursively. Idempotent per Bulk: one whose buffer is already
     * released is skipped (so if you retain a bulk's buffer yourself, release that reference with
     * {@code content().release()}, not by calling this twice). Accepts {@code null}.
     */
    static void release(Reply reply) {
        switch (reply) {
            case Bulk bulk when bulk.content().refCnt() > 0 -> bulk.content().release();
            case Aggregate aggregate -> aggregate.elements().forEach(Reply::release);
            case null, default -> {
            }
        }
    }
}
