package io.kvtier.store;

import java.io.IOException;

/**
 * A graceful stop could not write every acknowledged value to disk: {@link #keys()} keys holding {@link #bytes()}
 * bytes were only in memory and are lost. The process should exit non-zero.
 */
public final class ShutdownLossException extends IOException {
    private final long keys;
    private final long bytes;

    public ShutdownLossException(long keys, long bytes, IOException cause) {
        super(keys > 0
                ? "shutdown LOST " + keys + " keys (" + bytes + " bytes of values) that were only in memory: the disk "
                        + "tier could not take them (" + cause + ")"
                : "shutdown could not force the disk tier to stable storage (" + cause + "): recently written values "
                        + "may be lost", cause);
        this.keys = keys;
        this.bytes = bytes;
    }

    public long keys() {
        return keys;
    }

    public long bytes() {
        return bytes;
    }
}
