package io.kvtier.store.disk;

import java.io.IOException;

/** A record does not fit in the disk budget even after evicting every sealed region. */
public final class DiskFullException extends IOException {
    public DiskFullException(long requested, long budget) {
        super("record of " + requested + " bytes does not fit in the disk budget of " + budget + " bytes");
    }
}
