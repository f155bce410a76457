package io.kvtier.store;

/** A pin would take pinned bytes past their budget (a share of the memory budget); unpin something or raise it. */
public final class PinBudgetException extends RuntimeException {
    public PinBudgetException(long requested, long pinned, long budget) {
        super("pinning " + requested + " bytes would exceed the pin budget: " + pinned + " of " + budget
                + " bytes pinned (--pin-share); unpin keys or raise --pin-share");
    }
}
