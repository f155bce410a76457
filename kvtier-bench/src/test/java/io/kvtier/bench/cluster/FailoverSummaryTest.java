package io.kvtier.bench.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FailoverSummaryTest {
    /** 10 buckets of 1 s: 100 ok each, except errors at 3 s and 4 s (last at 4.5 s) and 1 at 7 s. */
    private static TimelineData data() {
        long[][] c = new long[TimelineData.COLUMNS][10];
        for (int b = 0; b < 10; b++) {
            c[TimelineData.READS_OK][b] = 60;
            c[TimelineData.WRITES_OK][b] = 40;
            c[TimelineData.MAX_LATENCY_NANOS][b] = 5_000_000;
        }
        c[TimelineData.READS_OK][3] = 0;
        c[TimelineData.WRITES_OK][3] = 0;
        c[TimelineData.WRITE_ERRORS][3] = 5;
        c[TimelineData.READ_ERRORS][4] = 2;
        c[TimelineData.LAST_ERROR_NANOS][4] = 4_500_000_000L;
        c[TimelineData.WRITE_ERRORS][7] = 1;
        c[TimelineData.LAST_ERROR_NANOS][7] = 7_200_000_000L;
        c[TimelineData.MAX_LATENCY_NANOS][4] = 1_900_000_000L;
        return new TimelineData(1_000_000_000L, c, 4_200_000_000L, Map.of("TRYAGAIN", 8L));
    }

    @Test
    void figuresAreMeasuredFromTheKillAndFromTheJoin() {
        List<TimelineEvent> events = List.of(new TimelineEvent(3.0, TimelineEvent.KILL, "kill -9 n2"),
                new TimelineEvent(3.7, TimelineEvent.VIEW, "epoch 4: 2 nodes"),
                new TimelineEvent(6.0, TimelineEvent.JOIN, "n4 starts"),
                new TimelineEvent(6.4, TimelineEvent.REBALANCED, "rebalanced (epoch 4)"),
                new TimelineEvent(8.0, TimelineEvent.VIEW, "epoch 5: 3 nodes"),
                new TimelineEvent(9.5, TimelineEvent.REBALANCED, "rebalanced (epoch 5)"));

        FailoverSummary s = FailoverSummary.of(data(), events, 10);

        assertThat(s.killAt()).isEqualTo(3.0);
        assertThat(s.viewChangeAfterKill()).isCloseTo(0.7, within(1e-9));
        assertThat(s.victimKeysServedAfter()).isCloseTo(1.2, within(1e-9));
        assertThat(s.errorsStoppedAfterKill()).isCloseTo(1.5, within(1e-9));
        assertThat(s.errorsAfterKill()).isEqualTo(7);
        assertThat(s.joinViewAfter()).isCloseTo(2.0, within(1e-9));
        assertThat(s.rebalancedAfterKill()).as("the kill's import ended after the join started")
                .isCloseTo(3.4, within(1e-9));
        assertThat(s.rebalancedAfterJoin()).as("not the kill's rebalance").isCloseTo(3.5, within(1e-9));
        assertThat(s.errorsAfterJoin()).isEqualTo(1);
        assertThat(s.errors()).isEqualTo(8);
        assertThat(s.ok()).isEqualTo(900);
        assertThat(s.maxLatencyMs()).isEqualTo(1900);
        assertThat(s.opsBeforeKill()).isEqualTo(100);
        assertThat(s.opsKillToJoin()).isCloseTo(200 / 3.0, within(1e-9));
        assertThat(s.lines()).hasSize(3).first().asString().contains("kill -9 n2 at 3.0 s");
    }

    @Test
    void whatNeverHappenedIsReportedAsNever() {
        List<TimelineEvent> events = List.of(new TimelineEvent(3.0, TimelineEvent.KILL, "kill -9 n2"),
                new TimelineEvent(6.0, TimelineEvent.JOIN, "n4 starts"));

        FailoverSummary s = FailoverSummary.of(data(), events, 10);

        assertThat(s.viewChangeAfterKill()).isNaN();
        assertThat(s.rebalancedAfterJoin()).isNaN();
        assertThat(s.lines().get(1)).contains("new table never, rebalanced (nothing left to import anywhere) never");
    }
}
