package io.kvtier.store;

/**
 * A write of a new key refused because the key index would pass its heap budget ({@link IndexBudget}); nothing was
 * stored, reads and overwrites of existing keys go on. Deleting keys or a larger {@code --index-memory} makes room.
 */
public final class IndexFullException extends RuntimeException {
    public IndexFullException(long keys, long usedBytes, long budgetBytes) {
        super("the key index is full: " + keys + " keys take " + usedBytes + " of the " + budgetBytes
                + " bytes of --index-memory; delete keys or raise --index-memory", null, false, false);
    }
}
