package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;
import org.junit.jupiter.api.Test;

class MultiRoundQaTest {
    private static final long MS = 1_000_000;

    private static MultiRoundQa.Options options(int users, int rounds, double qps) {
        return new MultiRoundQa.Options(users, rounds, 20, 10, 4, 3, qps, 42, 0);
    }

    @Test
    void eachRoundsPromptStartsWithThePreviousPromptAndItsAnswer() {
        MultiRoundQa qa = new MultiRoundQa(options(2, 4, 1));
        for (int round = 1; round < 4; round++) {
            int[] previous = qa.prompt(7, round - 1);
            int[] answer = qa.answer(7, round - 1);
            int[] prompt = qa.prompt(7, round);

            assertThat(prompt).hasSize(previous.length + answer.length + 4);
            assertThat(Arrays.copyOf(prompt, previous.length)).isEqualTo(previous);
            assertThat(Arrays.copyOfRange(prompt, previous.length, previous.length + answer.length))
                    .isEqualTo(answer);
        }
        assertThat(qa.prompt(7, 3)).hasSize(qa.options().promptTokens(3)).hasSize(20 + 10 + 3 * (4 + 3) + 4);
    }

    @Test
    void usersShareTheSystemPromptAndNothingElse() {
        MultiRoundQa qa = new MultiRoundQa(options(2, 2, 1));
        int[] a = qa.prompt(0, 0);
        int[] b = qa.prompt(1, 0);

        assertThat(Arrays.copyOf(a, 20)).isEqualTo(Arrays.copyOf(b, 20));
        assertThat(Arrays.copyOfRange(a, 20, a.length)).isNotEqualTo(Arrays.copyOfRange(b, 20, b.length));
        int[] otherSeed = new MultiRoundQa(new MultiRoundQa.Options(2, 2, 20, 10, 4, 3, 1, 43, 0)).prompt(0, 0);
        assertThat(Arrays.copyOf(otherSeed, 20)).isNotEqualTo(Arrays.copyOf(a, 20));
    }

    @Test
    void tenantsHaveSystemPromptsOfTheirOwnDrawnByZipfWeights() {
        MultiRoundQa qa = new MultiRoundQa(new MultiRoundQa.Options(4, 2, 20, 10, 4, 3, 1, 42, 0, 4, 1.0));
        int[] counts = new int[4];
        for (long user = 0; user < 25_000; user++) {
            counts[qa.tenant(user)]++;
        }
        // weights 1, 1/2, 1/3, 1/4 of 25/12: 48%, 24%, 16%, 12%
        assertThat(counts[0]).isBetween(11_500, 12_500);
        assertThat(counts[1]).isBetween(5_600, 6_400);
        assertThat(counts[2]).isBetween(3_600, 4_400);
        assertThat(counts[3]).isBetween(2_600, 3_400);
        long a = 0;
        long b = java.util.stream.LongStream.range(1, 100).filter(u -> qa.tenant(u) == qa.tenant(0)).findFirst()
                .orElseThrow();
        long c = java.util.stream.LongStream.range(1, 100).filter(u -> qa.tenant(u) != qa.tenant(0)).findFirst()
                .orElseThrow();
        assertThat(Arrays.copyOf(qa.prompt(a, 0), 20)).isEqualTo(Arrays.copyOf(qa.prompt(b, 0), 20));
        assertThat(Arrays.copyOf(qa.prompt(a, 0), 20)).isNotEqualTo(Arrays.copyOf(qa.prompt(c, 0), 20));
        // tenant 0's prompt is the one system prompt of a single-tenant run with the same seed
        MultiRoundQa one = new MultiRoundQa(new MultiRoundQa.Options(4, 2, 20, 10, 4, 3, 1, 42, 0));
        long first = java.util.stream.LongStream.range(0, 100).filter(u -> qa.tenant(u) == 0).findFirst()
                .orElseThrow();
        assertThat(Arrays.copyOf(qa.prompt(first, 0), 20)).isEqualTo(Arrays.copyOf(one.prompt(0, 0), 20));
        MultiRoundQa even = new MultiRoundQa(new MultiRoundQa.Options(4, 2, 20, 10, 4, 3, 1, 42, 0, 4, 0));
        int[] flat = new int[4];
        for (long user = 0; user < 20_000; user++) {
            flat[even.tenant(user)]++;
        }
        assertThat(Arrays.stream(flat).boxed().toList()).allSatisfy(n -> assertThat(n).isBetween(4_700, 5_300));
        assertThat(qa.options().withQps(3).systemPrompts()).isEqualTo(4);
        assertThatThrownBy(() -> new MultiRoundQa.Options(1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("system prompts");
        assertThatThrownBy(() -> new MultiRoundQa.Options(1, 1, 0, 0, 1, 1, 1, 0, 0, 2, -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tenant skew");
    }

    @Test
    void tokenIdsStayInTheirRangeAndAreTheSameEveryTime() {
        MultiRoundQa qa = new MultiRoundQa(new MultiRoundQa.Options(1, 3, 3000, 2000, 500, 400, 1, 9, 0));
        int[] prompt = qa.prompt(5, 2);
        assertThat(Arrays.stream(prompt).min().orElseThrow()).isGreaterThanOrEqualTo(1000);
        assertThat(Arrays.stream(prompt).max().orElseThrow()).isLessThan(30_000);
        assertThat(Arrays.stream(prompt).distinct().count()).isGreaterThan(5000); // not a constant filler
        assertThat(qa.prompt(5, 2)).isEqualTo(prompt);
    }

    /** A sender whose answers take {@code latency} on the fake clock; it records what it was sent and when. */
    private static final class FakeSender implements RequestSender {
        final FakeClock clock;
        final ToLongFunction<FleetRequest> latency;
        final List<FleetRequest> requests = new ArrayList<>();
        final List<Long> times = new ArrayList<>();

        FakeSender(FakeClock clock, ToLongFunction<FleetRequest> latency) {
            this.clock = clock;
            this.latency = latency;
        }

        @Override
        public CompletableFuture<RequestResult> send(FleetRequest request) {
            long now = clock.now;
            requests.add(request);
            times.add(now);
            long end = now + latency.applyAsLong(request);
            return CompletableFuture.completedFuture(new RequestResult(request, now, now + 1, end,
                    request.prompt().length, request.maxTokens(), 0, null));
        }

        List<String> log() {
            List<String> log = new ArrayList<>();
            for (int i = 0; i < requests.size(); i++) {
                log.add(times.get(i) / MS + "ms " + requests.get(i).user() + " r" + requests.get(i).round());
            }
            return log;
        }
    }

    /** A clock that only moves when the pacer sleeps: to the deadline. */
    static final class FakeClock implements Sleeper {
        long now;

        @Override
        public void sleepUntil(long deadlineNanos) {
            now = Math.max(now, deadlineNanos);
        }
    }

    @Test
    void usersSendAGapApartStartStaggeredAndAreReplacedWhenDone() throws InterruptedException {
        // 2 users at 10 req/s: each user every 200 ms, user 1 starting 100 ms after user 0; 2 rounds a user, the
        // first user of slot 1 only 1 (spread over rounds as LMCache's ramp-up does).
        FakeClock clock = new FakeClock();
        MultiRoundQa qa = new MultiRoundQa(options(2, 2, 10), () -> clock.now, clock);
        FakeSender sender = new FakeSender(clock, r -> 50 * MS);
        List<RequestResult> results = new ArrayList<>();

        qa.run(sender, 750 * MS, results::add);

        assertThat(sender.log()).containsExactly("0ms user-0 r0", "100ms user-1 r0", "200ms user-0 r1",
                "300ms user-3 r0", "400ms user-2 r0", "500ms user-3 r1", "600ms user-2 r1", "700ms user-5 r0");
        assertThat(results).hasSize(8);
        assertThat(qa.sent()).isEqualTo(8);
        assertThat(sender.requests.get(2).prompt()).startsWith(sender.requests.get(0).prompt());
        assertThat(sender.requests.get(3).prompt()).hasSize(qa.options().promptTokens(0));
    }

    @Test
    void aLateAnswerDelaysTheUsersNextRoundUntilItArrives() throws InterruptedException {
        FakeClock clock = new FakeClock();
        MultiRoundQa qa = new MultiRoundQa(options(1, 3, 10), () -> clock.now, clock);
        // gap 100 ms; round 0's answer takes 250 ms, so round 1 goes at 250 ms and round 2 a gap after that.
        FakeSender sender = new FakeSender(clock, r -> r.round() == 0 ? 250 * MS : 10 * MS);

        qa.run(sender, 400 * MS, r -> { });

        assertThat(sender.log()).containsExactly("0ms user-0 r0", "250ms user-0 r1", "350ms user-0 r2");
    }

    @Test
    void anAnswerStillOutHoldsTheUserBackWithoutStoppingTheOthers() throws InterruptedException {
        FakeClock clock = new FakeClock();
        MultiRoundQa qa = new MultiRoundQa(options(2, 5, 20), () -> clock.now, clock);
        List<CompletableFuture<RequestResult>> never = new ArrayList<>();
        RequestSender sender = new RequestSender() {
            @Override
            public CompletableFuture<RequestResult> send(FleetRequest request) {
                if (request.user().equals("user-0")) {
                    CompletableFuture<RequestResult> f = new CompletableFuture<>();
                    never.add(f);
                    return f;
                }
                long now = clock.now;
                return CompletableFuture.completedFuture(new RequestResult(request, now, now, now, 1, 1, 0, null));
            }
        };

        qa.run(sender, 1000 * MS, r -> { });

        assertThat(never).hasSize(1);
        assertThat(qa.sent()).isEqualTo(1 + 10); // user 0 once; slot 1 every 100 ms from 50 ms
    }

    @Test
    void onTheRealClockALateUserSendsAsSoonAsItsAnswerArrives() throws InterruptedException {
        // gap 50 ms, answers take 80 ms: every round goes when the previous answer arrives (the pacer is woken).
        MultiRoundQa qa = new MultiRoundQa(options(2, 3, 40));
        List<long[]> log = new java.util.concurrent.CopyOnWriteArrayList<>(); // user, round, sent, answered
        var delayed = CompletableFuture.delayedExecutor(80, java.util.concurrent.TimeUnit.MILLISECONDS);
        RequestSender sender = request -> {
            long sent = System.nanoTime();
            return CompletableFuture.supplyAsync(() -> {
                long end = System.nanoTime();
                log.add(new long[] {Long.parseLong(request.user().substring(5)), request.round(), sent, end});
                return new RequestResult(request, sent, end, end, 1, 1, 0, null);
            }, delayed);
        };
        long start = System.nanoTime();

        qa.run(sender, start + 600 * MS, r -> { });

        for (long[] answer : log) {
            log.stream().filter(next -> next[0] == answer[0] && next[1] == answer[1] + 1).findFirst()
                    .ifPresent(next -> assertThat(next[2] - answer[3]).as("user %d round %d", next[0], next[1])
                            .isBetween(0L, 40 * MS));
        }
        assertThat(log.stream().filter(a -> a[1] > 0).count()).isGreaterThanOrEqualTo(4);
    }

    @Test
    void theRateIsTheQps() {
        MultiRoundQa qa = new MultiRoundQa(options(4, 2, 2.5));
        assertThat(qa.requestsPerSecond()).isEqualTo(2.5);
        assertThat(qa.rateLabel()).isEqualTo("2.5 req/s");
        assertThat(new MultiRoundQa(options(4, 2, 4)).rateLabel()).isEqualTo("4 req/s");
    }

    @Test
    void badOptionsAreRefusedByName() {
        assertThatThrownBy(() -> options(0, 1, 1)).hasMessage("users 0 must be at least 1");
        assertThatThrownBy(() -> options(1, 1, 0)).hasMessage("qps 0.0 must be a positive number");
        assertThatThrownBy(() -> new MultiRoundQa.Options(1, 1, 0, 0, 0, 1, 1, 0, 0))
                .hasMessage("question tokens 0 must be at least 1");
        assertThatThrownBy(() -> new MultiRoundQa(options(1, 2, 1)).prompt(0, 2))
                .hasMessage("round 2 is outside 0..1");
    }
}
