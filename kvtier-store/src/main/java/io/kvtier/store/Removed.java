package io.kvtier.store;

/** Whether a removed key existed, and its value if the caller asked for it (the caller must close that reference). */
public record Removed(boolean existed, ValueRef old) {
    static final Removed NOTHING = new Removed(false, null);
}
