package io.kvtier.store.disk;

import java.io.IOException;

/** A record failed its checksum or header check on read; the caller treats it as a miss and drops the entry. */
public final class CorruptRecordException extends IOException {
    public CorruptRecordException(String message) {
        super(message);
    }
}
