package io.kvtier.store;

/** Whether a put was applied, and the previous value if it asked for it (the caller must close that reference). */
public record PutResult(boolean written, ValueRef old) {
}
