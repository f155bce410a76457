package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import java.util.List;

/**
 * Builds the caller's reply objects for a {@link RespReplyDecoder}, so the codec needs no reply model of its own.
 * Called on the decoding thread only, in stream order (an aggregate's elements before the aggregate); must never
 * return {@code null}.
 *
 * @param <T> the caller's reply type
 */
public interface ReplyFactory<T> {
    /** {@code +text}. */
    T simple(String text);

    /** {@code -message} or RESP3 {@code !len} (blob error), without the leading '-'. */
    T error(String message);

    /** {@code :value}. */
    T integer(long value);

    /** {@code $len}: takes ownership of {@code content}, which holds exactly the payload. */
    T bulk(ByteBuf content);

    /** RESP2 {@code $-1} and {@code *-1}, RESP3 {@code _}. */
    T nullValue();

    /**
     * {@code *} array, {@code ~} set, {@code >} push or {@code %} map (flattened: key, value, key, value, ...).
     * The decoder hands {@code elements} over and never touches the list again.
     */
    T aggregate(char type, List<T> elements);

    /** RESP3 {@code ,} double, {@code #} boolean ("t"/"f"), {@code (} big number, {@code =} verbatim ("txt:..."). */
    T other(char type, String text);

    /**
     * Releases a value the decoder built but will not hand out: the elements of a half-decoded aggregate when decoding
     * fails or the decoder is closed, and skipped RESP3 attributes.
     */
    void release(T value);
}
