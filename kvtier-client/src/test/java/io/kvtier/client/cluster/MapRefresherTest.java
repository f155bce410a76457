package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class MapRefresherTest {
    @Test
    void manyRequestsWhileOneWaitsToStartShareOneRefresh() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        try (MapRefresher refresher = new MapRefresher(runs::incrementAndGet, 200)) {
            refresher.request().get(1, TimeUnit.SECONDS); // the first runs at once
            List<CompletableFuture<Void>> waiting = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                waiting.add(refresher.request());
            }
            CompletableFuture.allOf(waiting.toArray(CompletableFuture[]::new)).get(2, TimeUnit.SECONDS);

            assertThat(runs).hasValue(2);
            assertThat(waiting.stream().distinct()).hasSize(1);
        }
    }

    @Test
    void refreshesAreAtLeastTheIntervalApart() throws Exception {
        List<Long> starts = new ArrayList<>();
        try (MapRefresher refresher = new MapRefresher(() -> starts.add(System.nanoTime()), 100)) {
            for (int i = 0; i < 4; i++) {
                refresher.request().get(2, TimeUnit.SECONDS);
            }
        }
        for (int i = 1; i < starts.size(); i++) {
            assertThat(starts.get(i) - starts.get(i - 1)).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(99));
        }
    }

    @Test
    void aRequestDuringARefreshWaitsForTheNextOneWhichSeesNewerNews() throws Exception {
        CountDownLatch inFirst = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        try (MapRefresher refresher = new MapRefresher(() -> {
            if (runs.incrementAndGet() == 1) {
                inFirst.countDown();
                await(release);
            }
        }, 10)) {
            CompletableFuture<Void> first = refresher.request();
            inFirst.await();
            CompletableFuture<Void> second = refresher.request();
            assertThat(second).isNotSameAs(first);
            release.countDown();
            second.get(2, TimeUnit.SECONDS);

            assertThat(runs).hasValue(2);
        }
    }

    @Test
    void closingCompletesAWaitingRequestSoNoCommandWaitsForever() throws Exception {
        MapRefresher refresher = new MapRefresher(() -> { }, 60_000);
        refresher.request().get(1, TimeUnit.SECONDS);
        CompletableFuture<Void> waiting = refresher.request();

        refresher.close();

        assertThat(waiting).succeedsWithin(java.time.Duration.ofSeconds(1));
        assertThat(refresher.request()).isDone();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
