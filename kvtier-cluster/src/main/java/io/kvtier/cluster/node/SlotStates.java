package io.kvtier.cluster.node;

import io.kvtier.client.cluster.SlotHash;
import java.util.BitSet;
import java.util.concurrent.atomic.AtomicReferenceArray;

/** Every slot's {@link SlotState} on this node; each move is checked. Thread-safe. */
final class SlotStates {
    private final AtomicReferenceArray<SlotState> states = new AtomicReferenceArray<>(SlotHash.SLOTS);

    SlotStates() {
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            states.set(s, SlotState.NONE);
        }
    }

    SlotState get(int slot) {
        return states.get(slot);
    }

    /** Moves {@code slot} to {@code to}; throws on a move {@link SlotState} does not allow. */
    void move(int slot, SlotState to) {
        SlotState from;
        do {
            from = states.get(slot);
        } while (!states.compareAndSet(slot, from, from.checkedMove(to)));
    }

    /** Moves {@code slot} from {@code from} to {@code to} if it is still in {@code from}; returns whether it did. */
    boolean moveIf(int slot, SlotState from, SlotState to) {
        return states.compareAndSet(slot, from, from.checkedMove(to));
    }

    int count(SlotState wanted) {
        int n = 0;
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            n += states.get(s) == wanted ? 1 : 0;
        }
        return n;
    }

    BitSet slotsIn(SlotState wanted) {
        BitSet set = new BitSet(SlotHash.SLOTS);
        for (int s = 0; s < SlotHash.SLOTS; s++) {
            set.set(s, states.get(s) == wanted);
        }
        return set;
    }
}
