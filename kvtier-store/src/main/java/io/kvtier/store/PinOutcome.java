package io.kvtier.store;

/** What a pin request did: nothing (no such key), or pinned, with the value already in memory or still on disk. */
public enum PinOutcome {
    NO_KEY, IN_MEMORY, ON_DISK
}
