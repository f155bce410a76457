package io.kvtier.server.net;

import io.kvtier.server.reply.Reply;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.stream.ChunkedInput;
import io.netty.handler.stream.ChunkedWriteHandler;

/*
 * Why: SslHandler encrypts everything written to it when it is flushed, whatever the channel's writability, so a
 * 256 MiB value written as one buffer (a view of its pages, Reply.value) became 256 MiB of ciphertext in direct memory
 * per reading client at once. Handed to a ChunkedWriteHandler in slices instead, it is encrypted a slice at a time and
 * only while the channel is writable: about the high water mark (4 MiB) of ciphertext waits per connection, as on a
 * plain connection, where the socket takes the pages themselves.
 */

/**
 * On a TLS connection, between the {@link ChunkedWriteHandler} behind the SslHandler and the
 * {@link ConnectionHandler}: turns writes larger than {@link #SLICE} into chunked inputs of that size. The write's
 * promise completes once the last slice is written, so a reply's clean-up (releasing the value's pages) waits for all
 * of it. Stateless and shared.
 */
@ChannelHandler.Sharable
public final class TlsWriteSlicer extends ChannelOutboundHandlerAdapter {
    /** Slices of this size are encrypted one after another: 16 TLS records. */
    static final int SLICE = 256 * 1024;

    public static final TlsWriteSlicer INSTANCE = new TlsWriteSlicer();

    private TlsWriteSlicer() {
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf buf && buf.readableBytes() > SLICE) {
            ctx.write(new Slices(buf), promise);
        } else {
            ctx.write(msg, promise);
        }
    }

    /** A buffer read out in retained slices; closing it (done or failed) releases the buffer. */
    private static final class Slices implements ChunkedInput<ByteBuf> {
        private final ByteBuf buf;
        private final long length;

        Slices(ByteBuf buf) {
            this.buf = buf;
            this.length = buf.readableBytes();
        }

        @Override
        public boolean isEndOfInput() {
            return !buf.isReadable();
        }

        @Override
        public void close() {
            buf.release();
        }

        @Deprecated
        @Override
        public ByteBuf readChunk(ChannelHandlerContext ctx) {
            return readChunk(ctx.alloc());
        }

        @Override
        public ByteBuf readChunk(ByteBufAllocator allocator) {
            return buf.isReadable() ? buf.readRetainedSlice(Math.min(SLICE, buf.readableBytes())) : null;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public long progress() {
            return length - buf.readableBytes();
        }
    }
}
