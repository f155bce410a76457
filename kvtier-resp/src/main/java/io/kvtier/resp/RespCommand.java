package io.kvtier.resp;

/**
 * One decoded command: arguments that are either heap byte arrays (short ones) or {@link BulkSink}s (payloads at or
 * above the sink threshold). The consumer owns the sinks: it {@link #takeSink takes} the ones it keeps and calls
 * {@link #release()} when done, which aborts every sink not taken.
 */
public final class RespCommand {
    private final byte[][] small;
    private final BulkSink[] large;

    RespCommand(byte[][] small, BulkSink[] large) {
        this.small = small;
        this.large = large;
    }

    /** Builds a command of heap arguments only (tests, inline commands, internal callers). */
    public static RespCommand of(byte[]... args) {
        return new RespCommand(args.clone(), new BulkSink[args.length]);
    }

    public int argCount() {
        return small.length;
    }

    /** True when argument {@code i} arrived as a sink rather than a heap array. */
    public boolean isSink(int i) {
        return large[i] != null;
    }

    /** Argument {@code i} as bytes; a sink argument is copied to the heap (use for keys and options only). */
    public byte[] bytes(int i) {
        if (small[i] == null) {
            small[i] = large[i].toBytes();
        }
        return small[i];
    }

    /** Length of argument {@code i} in bytes, without materializing it. */
    public long length(int i) {
        return large[i] != null ? large[i].length() : small[i].length;
    }

    /** Sink argument {@code i} without taking it (null for heap arguments); the command still owns it. */
    public BulkSink sink(int i) {
        return large[i];
    }

    /** Transfers ownership of sink argument {@code i} to the caller; {@link #release()} will not abort it. */
    public BulkSink takeSink(int i) {
        BulkSink sink = large[i];
        large[i] = null;
        return sink;
    }

    /**
     * A new command made of arguments {@code indexes} of this one, in that order; sinks among them move to the new
     * command (this one no longer owns them). Used to split a multi-key command by owner, or to unwrap a forwarded one.
     */
    public RespCommand take(int... indexes) {
        byte[][] s = new byte[indexes.length][];
        BulkSink[] l = new BulkSink[indexes.length];
        for (int k = 0; k < indexes.length; k++) {
            int i = indexes[k];
            s[k] = small[i];
            l[k] = large[i];
            large[i] = null;
        }
        return new RespCommand(s, l);
    }

    /** Aborts every sink not taken. Idempotent. */
    public void release() {
        for (int i = 0; i < large.length; i++) {
            if (large[i] != null) {
                large[i].abort();
                large[i] = null;
            }
        }
    }
}
