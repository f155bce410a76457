package io.kvtier.store;

/** A value cannot be stored: larger than a tier can ever hold, or memory stayed full past the wait limit. */
public final class StoreFullException extends RuntimeException {
    public StoreFullException(String message) {
        super(message, null, false, false);
    }
}
