package io.kvtier.resp;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/** Test harness: feeds a reply decoder chunk by chunk through a cumulation buffer, as a channel would. */
final class ReplyDecoding {
    /** The replies decoded, plus the error that ended decoding, if any. */
    record Outcome(List<String> replies, String error) {
    }

    private ReplyDecoding() {
    }

    static RespReplyDecoder<String> decoder(RespReplyDecoder.Limits limits) {
        return new RespReplyDecoder<>(limits, UnpooledByteBufAllocator.DEFAULT, new RenderedReplies());
    }

    /** Decodes {@code chunks} in order, discarding consumed bytes after each chunk; closes the decoder at the end. */
    static Outcome run(RespReplyDecoder<String> decoder, List<byte[]> chunks) {
        List<String> replies = new ArrayList<>();
        ByteBuf buf = Unpooled.buffer();
        try {
            for (byte[] chunk : chunks) {
                buf.writeBytes(chunk);
                for (String reply; (reply = decoder.decode(buf)) != null; ) {
                    replies.add(reply);
                }
                buf.discardReadBytes();
            }
            if (buf.isReadable()) {
                return new Outcome(replies, "incomplete: " + buf.readableBytes() + " bytes left");
            }
            return new Outcome(replies, null);
        } catch (RespReplyException e) {
            return new Outcome(replies, e.getMessage());
        } finally {
            decoder.close();
            buf.release();
        }
    }
}
