package io.kvtier.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SlotStatesTest {
    @Test
    void slotsStartWithNothingAndMoveThroughAnImport() {
        SlotStates states = new SlotStates();
        assertThat(states.count(SlotState.NONE)).isEqualTo(16384);

        states.move(7, SlotState.IMPORTING);
        states.move(9, SlotState.COMPLETE); // an owner alone, or a slot kept on rejoining
        assertThat(states.slotsIn(SlotState.IMPORTING).stream().boxed()).containsExactly(7);
        assertThat(states.moveIf(7, SlotState.IMPORTING, SlotState.COMPLETE)).isTrue();
        assertThat(states.moveIf(7, SlotState.IMPORTING, SlotState.COMPLETE)).as("no longer importing").isFalse();
        assertThat(states.count(SlotState.COMPLETE)).isEqualTo(2);

        states.move(7, SlotState.NONE); // not an owner any more
        assertThat(states.get(7)).isEqualTo(SlotState.NONE);
    }

    @Test
    void aCompleteSlotNeverGoesBackToImporting() {
        SlotStates states = new SlotStates();
        states.move(1, SlotState.COMPLETE);
        states.move(1, SlotState.COMPLETE); // staying put is allowed

        assertThatThrownBy(() -> states.move(1, SlotState.IMPORTING)).isInstanceOf(IllegalStateException.class)
                .hasMessage("illegal slot transition COMPLETE -> IMPORTING");
        assertThat(states.get(1)).isEqualTo(SlotState.COMPLETE);
    }
}
