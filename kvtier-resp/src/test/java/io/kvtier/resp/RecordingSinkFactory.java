package io.kvtier.resp;

import java.util.ArrayList;
import java.util.List;

/**
 * A test sink factory that hands out {@link HeapBulkSink}s and remembers them; it can refuse (return null) a number
 * of times before each sink, to exercise the decoder's waiting state.
 */
final class RecordingSinkFactory implements BulkSinkFactory {
    final List<HeapBulkSink> opened = new ArrayList<>();
    private final int refusalsPerSink;
    private int refusalsLeft;
    int refusals;

    RecordingSinkFactory() {
        this(0);
    }

    RecordingSinkFactory(int refusalsPerSink) {
        this.refusalsPerSink = refusalsPerSink;
        this.refusalsLeft = refusalsPerSink;
    }

    @Override
    public BulkSink open(int argIndex, long length) {
        if (refusalsLeft > 0) {
            refusalsLeft--;
            refusals++;
            return null;
        }
        refusalsLeft = refusalsPerSink;
        HeapBulkSink sink = new HeapBulkSink(argIndex, length);
        opened.add(sink);
        return sink;
    }

    /** Stops refusing: every later open succeeds. */
    void stopRefusing() {
        refusalsLeft = 0;
    }

    boolean allAborted() {
        return opened.stream().allMatch(HeapBulkSink::isAborted);
    }
}
