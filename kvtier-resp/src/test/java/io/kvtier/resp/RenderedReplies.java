package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Test model: renders each reply as a compact string ({@code +OK}, {@code $bytes}, {@code *[:1, _]}, ...), releasing
 * bulk buffers at once, so that decoded streams compare with {@code equals}.
 */
final class RenderedReplies implements ReplyFactory<String> {
    @Override
    public String simple(String text) {
        return "+" + text;
    }

    @Override
    public String error(String message) {
        return "-" + message;
    }

    @Override
    public String integer(long value) {
        return ":" + value;
    }

    @Override
    public String bulk(ByteBuf content) {
        try {
            return "$" + content.toString(StandardCharsets.ISO_8859_1);
        } finally {
            content.release();
        }
    }

    @Override
    public String nullValue() {
        return "_";
    }

    @Override
    public String aggregate(char type, List<String> elements) {
        return type + elements.toString();
    }

    @Override
    public String other(char type, String text) {
        return type + text;
    }

    @Override
    public void release(String value) {
    }
}
