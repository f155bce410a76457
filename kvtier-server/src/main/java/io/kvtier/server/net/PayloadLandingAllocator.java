package io.kvtier.server.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelConfig;
import io.netty.channel.MaxMessagesRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;
import java.nio.ByteBuffer;

/*
 * Why: a 1 MiB SET used to cost two copies, the kernel's (socket to a read buffer) and ours (read buffer to the
 * value's pages); Redis reads a large bulk straight into the object it keeps. Netty reads the socket into whatever
 * buffer the channel's RecvByteBufAllocator hands out, so while the decoder is inside a payload bound for memory, this
 * allocator hands out a view of the value's next page instead of a fresh buffer: the kernel copies the bytes to where
 * they stay, and the handler only counts them (ConnectionHandler.channelRead).
 *
 * Windows end at page boundaries, so a read that starts mid-page lands just the page's rest, and the reads after it
 * land whole pages. The payload's last bytes, if fewer than MIN_TAIL, come in an ordinary read together with the CRLF
 * and the next command, so landing does not cost an extra system call per small pipelined command.
 */

/**
 * A receive-buffer allocator that lands socket reads directly in a payload's destination when the connection's
 * {@link Landing} offers one, and otherwise allocates as Netty's adaptive allocator does. One per channel; used on its
 * event loop only.
 */
final class PayloadLandingAllocator implements MaxMessagesRecvByteBufAllocator {
    /** A payload's last bytes are read with what follows them when fewer than this. */
    static final int MIN_TAIL = 16 * 1024;

    /** The connection's side: where the next read may land, and which buffer was handed out for it. */
    interface Landing {
        /** Where the next read should land, or {@code null} for an ordinary read. */
        ByteBuffer landingWindow();

        /** The buffer over that window, to recognise it when the read arrives; {@code null} for an ordinary read. */
        void landed(ByteBuf view);
    }

    private final AdaptiveRecvByteBufAllocator adaptive = new AdaptiveRecvByteBufAllocator();
    private final Landing landing;

    PayloadLandingAllocator(Landing landing) {
        this.landing = landing;
    }

    @Override
    public int maxMessagesPerRead() {
        return adaptive.maxMessagesPerRead();
    }

    @Override
    public MaxMessagesRecvByteBufAllocator maxMessagesPerRead(int maxMessagesPerRead) {
        adaptive.maxMessagesPerRead(maxMessagesPerRead);
        return this;
    }

    @Override
    public Handle newHandle() {
        return new LandingHandle((ExtendedHandle) adaptive.newHandle(), landing);
    }

    /** Delegates everything to the adaptive handle except where the bytes go. */
    private record LandingHandle(ExtendedHandle delegate, Landing landing) implements ExtendedHandle {
        @Override
        public ByteBuf allocate(ByteBufAllocator alloc) {
            ByteBuffer window = landing.landingWindow();
            if (window == null) {
                landing.landed(null);
                return delegate.allocate(alloc);
            }
            ByteBuf view = Unpooled.wrappedBuffer(window).clear(); // a view: releasing it frees nothing
            landing.landed(view);
            return view;
        }

        @Override
        public int guess() {
            return delegate.guess();
        }

        @Override
        public void reset(ChannelConfig config) {
            delegate.reset(config);
        }

        @Override
        public void incMessagesRead(int numMessages) {
            delegate.incMessagesRead(numMessages);
        }

        @Override
        public void lastBytesRead(int bytes) {
            delegate.lastBytesRead(bytes);
        }

        @Override
        public int lastBytesRead() {
            return delegate.lastBytesRead();
        }

        @Override
        public void attemptedBytesRead(int bytes) {
            delegate.attemptedBytesRead(bytes);
        }

        @Override
        public int attemptedBytesRead() {
            return delegate.attemptedBytesRead();
        }

        @Override
        public boolean continueReading() {
            return delegate.continueReading();
        }

        @Override
        public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
            return delegate.continueReading(maybeMoreDataSupplier);
        }

        @Override
        public void readComplete() {
            delegate.readComplete();
        }
    }
}
