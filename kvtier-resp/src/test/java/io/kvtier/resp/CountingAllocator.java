package io.kvtier.resp;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;

/** An unpooled allocator that remembers every buffer it hands out, to count allocations and check releases. */
final class CountingAllocator extends AbstractByteBufAllocator {
    private final UnpooledByteBufAllocator delegate = new UnpooledByteBufAllocator(false, true);
    final List<ByteBuf> allocated = new ArrayList<>();

    CountingAllocator() {
        super(false);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
        return record(delegate.heapBuffer(initialCapacity, maxCapacity));
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
        return record(delegate.directBuffer(initialCapacity, maxCapacity));
    }

    @Override
    public CompositeByteBuf compositeHeapBuffer(int maxNumComponents) {
        return (CompositeByteBuf) record(new CompositeByteBuf(this, false, maxNumComponents));
    }

    @Override
    public CompositeByteBuf compositeDirectBuffer(int maxNumComponents) {
        return (CompositeByteBuf) record(new CompositeByteBuf(this, true, maxNumComponents));
    }

    @Override
    public boolean isDirectBufferPooled() {
        return false;
    }

    boolean allReleased() {
        return allocated.stream().allMatch(buf -> buf.refCnt() == 0);
    }

    private ByteBuf record(ByteBuf buf) {
        allocated.add(buf);
        return buf;
    }
}
