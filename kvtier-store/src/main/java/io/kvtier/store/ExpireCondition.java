package io.kvtier.store;

/** Redis 7's EXPIRE options: NX (only without expiry), XX (only with), GT (only later), LT (only sooner). */
public enum ExpireCondition {
    ALWAYS, NX, XX, GT, LT;

    /** Whether the change from {@code current} to {@code proposed} (epoch millis, 0 = none) applies. */
    boolean allows(long current, long proposed) {
        return switch (this) {
            case ALWAYS -> true;
            case NX -> current == 0;
            case XX -> current != 0;
            // Redis treats "no expiry" as infinite: GT never applies to it, LT always does.
            case GT -> current != 0 && proposed > current;
            case LT -> current == 0 || proposed < current;
        };
    }
}
