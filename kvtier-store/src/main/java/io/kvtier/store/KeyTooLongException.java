package io.kvtier.store;

import io.kvtier.store.disk.RecordFormat;

/** A key longer than the disk format can hold; the write is refused before anything is stored. */
public final class KeyTooLongException extends RuntimeException {
    public KeyTooLongException(int length) {
        super("key of " + length + " bytes exceeds the maximum key length of " + RecordFormat.MAX_KEY_LENGTH
                + " bytes", null, false, false);
    }
}
