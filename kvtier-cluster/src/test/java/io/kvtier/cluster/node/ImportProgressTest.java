package io.kvtier.cluster.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.node.ImportProgress.Phase;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

class ImportProgressTest {
    private final LongAdder keys = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final ImportProgress progress = new ImportProgress(keys, bytes);

    @Test
    void isIdleBeforeAnyImport() {
        ImportProgress.Status s = progress.status();
        assertThat(s.phase()).isEqualTo(Phase.IDLE);
        assertThat(s.phase()).hasToString("idle");
        assertThat(s.slots()).isZero();
        assertThat(s.startedAtMillis()).isZero();
    }

    @Test
    void countsValuesCopiedSinceTheImportBeganAndSlotsThroughEachStep() {
        keys.add(100); // an earlier import's values are not this one's
        bytes.add(1_000);
        progress.begin(7, 4096);
        assertThat(progress.status().phase()).isEqualTo(Phase.WAITING);
        progress.copying(2);
        progress.slotsDone(96);
        progress.pass(1);
        keys.add(5);
        bytes.add(500);
        progress.listed(256);
        progress.slotsCopied(2000);
        ImportProgress.Status s = progress.status();
        assertThat(s.phase()).isEqualTo(Phase.COPYING);
        assertThat(s.epoch()).isEqualTo(7);
        assertThat(s.slots()).isEqualTo(4096);
        assertThat(s.slotsDone()).isEqualTo(96);
        assertThat(s.slotsCopied()).isEqualTo(2096);
        assertThat(s.sources()).isEqualTo(2);
        assertThat(s.pass()).isEqualTo(1);
        assertThat(s.keysListed()).isEqualTo(256);
        assertThat(s.keys()).isEqualTo(5);
        assertThat(s.bytes()).isEqualTo(500);
        assertThat(s.startedAtMillis()).isPositive();
    }

    @Test
    void aFinishedImportFreezesItsCountsAndElapsedTime() throws Exception {
        progress.begin(3, 10);
        progress.copying(1);
        keys.add(2);
        progress.finished();
        keys.add(50); // a later import's values
        ImportProgress.Status s = progress.status();
        Thread.sleep(20);
        assertThat(s.phase()).isEqualTo(Phase.DONE);
        assertThat(s.slotsDone()).isEqualTo(10);
        assertThat(s.slotsCopied()).isEqualTo(10);
        assertThat(s.keys()).isEqualTo(2);
        assertThat(progress.status().elapsedMillis()).isEqualTo(s.elapsedMillis());
    }

    @Test
    void aRetryAtTheSameEpochKeepsTheStartAndTheCompletedSlots() throws Exception {
        progress.begin(5, 100);
        progress.copying(2);
        progress.slotsDone(10);
        progress.slotsCopied(40);
        progress.listed(300);
        long started = progress.status().startedAtMillis();
        Thread.sleep(5);
        progress.begin(5, 90); // the round failed and starts over; ten slots are already complete
        ImportProgress.Status s = progress.status();
        assertThat(s.startedAtMillis()).isEqualTo(started);
        assertThat(s.slots()).isEqualTo(100);
        assertThat(s.slotsDone()).isEqualTo(10);
        assertThat(s.slotsCopied()).isEqualTo(10);
        assertThat(s.keysListed()).isZero();
    }

    @Test
    void aNewerTableSupersedesARunningImportAndTheNextOneStartsAfresh() {
        progress.begin(5, 100);
        progress.copying(2);
        keys.add(3);
        progress.superseded();
        assertThat(progress.status().phase()).isEqualTo(Phase.SUPERSEDED);
        assertThat(progress.status().keys()).isEqualTo(3);
        progress.begin(6, 50);
        ImportProgress.Status s = progress.status();
        assertThat(s.epoch()).isEqualTo(6);
        assertThat(s.slots()).isEqualTo(50);
        assertThat(s.keys()).isZero();
    }
}
