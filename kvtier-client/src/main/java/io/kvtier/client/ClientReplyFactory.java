package io.kvtier.client;

import io.kvtier.resp.ReplyFactory;
import io.netty.buffer.ByteBuf;
import java.util.Collections;
import java.util.List;

/** Builds {@link Reply} values for the codec's {@link io.kvtier.resp.RespReplyDecoder}. Stateless. */
final class ClientReplyFactory implements ReplyFactory<Reply> {
    static final ClientReplyFactory INSTANCE = new ClientReplyFactory();

    private static final Reply.Null NULL = new Reply.Null();

    private ClientReplyFactory() {
    }

    @Override
    public Reply simple(String text) {
        return new Reply.Simple(text);
    }

    @Override
    public Reply error(String message) {
        return new Reply.Error(message);
    }

    @Override
    public Reply integer(long value) {
        return new Reply.Int(value);
    }

    @Override
    public Reply bulk(ByteBuf content) {
        return new Reply.Bulk(content);
    }

    @Override
    public Reply nullValue() {
        return NULL;
    }

    @Override
    public Reply aggregate(char type, List<Reply> elements) {
        return new Reply.Aggregate(type, Collections.unmodifiableList(elements));
    }

    @Override
    public Reply other(char type, String text) {
        return new Reply.Other(type, text);
    }

    @Override
    public void release(Reply value) {
        Reply.release(value);
    }
}
