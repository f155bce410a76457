package io.kvtier.bench.fleet;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Multi-round chats shaped like LMCache's {@code benchmarks/multi_round_qa/multi-round-qa.py}: {@code users} users
 * are active at once, each asking {@code rounds} questions; a user's first prompt is the shared system prompt and the
 * user's own history, and every later prompt is the previous prompt, its answer and a new question, so each round
 * can reuse the previous round's KV cache, and every user the system prompt's.
 *
 * <p><b>Pacing</b>, as LMCache's script: a user sends its next round {@code users / qps} seconds after it sent the
 * previous one (its {@code gap_between_requests}), but not before the previous answer arrived; a late user sends as
 * soon as the answer arrives, and its next round is then due a gap after that. So the fleet is offered {@code qps}
 * requests per second while it keeps up, and fewer, like a closed loop, once answers take longer than the gap.
 * Users start {@code 1 / qps} apart. A user that has finished its rounds (sent the last and got its answer) is
 * replaced by a new user, with a new history, whose first round is due a gap after the old user's last; so
 * {@code users} stay active.
 *
 * <p>Where ours differs from LMCache's script: it steps every 0.1 s and sends when a gap has passed, so its sends
 * fall on that grid; ours sends at the due time. It lets new users join on a clock of its own (every
 * {@code gap x (rounds - 1) / users} seconds) rather than when one leaves, and starts with users "pre-aged" by
 * {@code set_internal_state}, so that users are spread over rounds from the start; ours keeps a slot per active user
 * and gives the first user of slot {@code i} only {@code rounds - floor(i x rounds / users)} rounds, which spreads
 * later users over rounds the same way (without it, all users would grow their contexts in step and the cache's
 * working set would swing). Its prompts are chat messages of the word "hi" and it caps but does not force answer
 * lengths; ours sends token ids to {@code /v1/completions} with {@code ignore_eos}, so every round's length is known
 * and the answer's ids (which the emulated engine does not echo) are made here. Its {@code --init-user-id} is our
 * {@code firstUser}: give each point of a sweep its own users, or a later point finds an earlier point's histories
 * in the cache.
 *
 * <p><b>Tenants</b> (ours; LMCache's script has one system prompt): with {@code systemPrompts} above 1, each user
 * belongs to one of that many tenants, each with a system prompt of its own, drawn with Zipf weights
 * {@code 1 / (k + 1)^tenantSkew} (tenant 0 the most popular), as applications of very different traffic share a fleet:
 * the hot tenant's prefix wants several engines and the cold ones want one each.
 *
 * <p>Token ids are a pure function of (seed, user, round, position) (a system prompt's of (seed, tenant, position)), so
 * round {@code r}'s prompt begins with exactly round {@code r - 1}'s prompt and answer. Not thread-safe: one
 * {@link #run} at a time, each starting again from {@code firstUser} (so one instance per point).
 */
public final class MultiRoundQa implements FleetWorkload {
    private static final long SYSTEM = 1;
    private static final long HISTORY = 2;
    private static final long QUESTION = 3;
    private static final long ANSWER = 4;
    private static final long TENANT = 5;

    private final Options options;
    private final LongSupplier clock;
    private final Sleeper sleeper;
    private final long gapNanos;
    private final int[][] systemPrompts;
    private final double[] tenantCdf;
    private final AtomicLong sent = new AtomicLong();

    /**
     * How the chats look, validated. LMCache's flags in brackets.
     *
     * @param users              users active at once [{@code --num-users}]
     * @param rounds             questions per user [{@code --num-rounds}]
     * @param systemPromptTokens the system prompt all users share [{@code --shared-system-prompt}]
     * @param historyTokens      each user's own context, in its first prompt [{@code --user-history-prompt}]
     * @param questionTokens     each question
     * @param answerTokens       each answer: {@code max_tokens} [{@code --answer-len}]
     * @param qps                requests per second offered to the whole fleet [{@code --qps}]
     * @param seed               names the token ids: another seed, other prompts (the system prompt's too)
     * @param firstUser          the first user's number [{@code --init-user-id}]
     * @param systemPrompts      tenants, each with a system prompt of {@code systemPromptTokens} (1: all users share one)
     * @param tenantSkew         the Zipf exponent of the tenants' popularity (0: all equally popular)
     */
    public record Options(int users, int rounds, int systemPromptTokens, int historyTokens, int questionTokens,
                          int answerTokens, double qps, long seed, long firstUser, int systemPrompts,
                          double tenantSkew) {
        /** One system prompt all users share, as LMCache's script has. */
        public Options(int users, int rounds, int systemPromptTokens, int historyTokens, int questionTokens,
                       int answerTokens, double qps, long seed, long firstUser) {
            this(users, rounds, systemPromptTokens, historyTokens, questionTokens, answerTokens, qps, seed, firstUser,
                    1, 0);
        }

        public Options {
            if (systemPrompts < 1 || systemPrompts > 10_000) {
                throw new IllegalArgumentException("system prompts " + systemPrompts + " is not within 1..10000");
            }
            if (!(tenantSkew >= 0) || tenantSkew > 10) {
                throw new IllegalArgumentException("tenant skew " + tenantSkew + " is not within 0..10");
            }
            atLeast("users", users, 1);
            atLeast("rounds", rounds, 1);
            atLeast("system prompt tokens", systemPromptTokens, 0);
            atLeast("history tokens", historyTokens, 0);
            atLeast("question tokens", questionTokens, 1);
            atLeast("answer tokens", answerTokens, 1);
            if (!(qps > 0) || Double.isInfinite(qps)) {
                throw new IllegalArgumentException("qps " + qps + " must be a positive number");
            }
            if (firstUser < 0) {
                throw new IllegalArgumentException("first user " + firstUser + " must be >= 0");
            }
            long longest = (long) systemPromptTokens + historyTokens + (long) rounds * questionTokens
                    + (long) (rounds - 1) * answerTokens;
            if (longest > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("the last round's prompt would have " + longest
                        + " tokens; fewer rounds or shorter questions and answers");
            }
        }

        private static void atLeast(String name, int value, int min) {
            if (value < min) {
                throw new IllegalArgumentException(name + " " + value + " must be at least " + min);
            }
        }

        /** The same chats offered at {@code other} requests per second. */
        public Options withQps(double other) {
            return new Options(users, rounds, systemPromptTokens, historyTokens, questionTokens, answerTokens, other,
                    seed, firstUser, systemPrompts, tenantSkew);
        }

        /** Tokens of round {@code round}'s prompt (rounds counted from 0). */
        public int promptTokens(int round) {
            return systemPromptTokens + historyTokens + round * (questionTokens + answerTokens) + questionTokens;
        }
    }

    public MultiRoundQa(Options options) {
        this(options, System::nanoTime, Sleeper.system());
    }

    /** With the pacer's clock and sleeper given, for tests that run the schedule on a fake clock. */
    MultiRoundQa(Options options, LongSupplier clock, Sleeper sleeper) {
        this.options = Objects.requireNonNull(options, "options");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
        this.gapNanos = Math.round(options.users() / options.qps() * 1e9);
        this.systemPrompts = new int[options.systemPrompts()][options.systemPromptTokens()];
        this.tenantCdf = new double[options.systemPrompts()];
        double sum = 0;
        for (int k = 0; k < systemPrompts.length; k++) {
            TokenIds.fill(systemPrompts[k], 0, TokenIds.stream(options.seed(), SYSTEM, k, 0), 0,
                    options.systemPromptTokens());
            sum += Math.pow(k + 1, -options.tenantSkew());
            tenantCdf[k] = sum;
        }
        for (int k = 0; k < tenantCdf.length; k++) {
            tenantCdf[k] /= sum;
        }
    }

    /** The tenant of {@code user}: a pure function of (seed, user), drawn by the tenants' Zipf weights. */
    public int tenant(long user) {
        if (tenantCdf.length == 1) {
            return 0;
        }
        double u = (TokenIds.token(TokenIds.stream(options.seed(), TENANT, user, 0), 0) - TokenIds.FIRST + 0.5)
                / (TokenIds.END - TokenIds.FIRST);
        for (int k = 0; k < tenantCdf.length - 1; k++) {
            if (u < tenantCdf[k]) {
                return k;
            }
        }
        return tenantCdf.length - 1;
    }

    public Options options() {
        return options;
    }

    @Override
    public String rateLabel() {
        return new BigDecimal(options.qps(), new MathContext(4)).stripTrailingZeros().toPlainString() + " req/s";
    }

    @Override
    public double requestsPerSecond() {
        return options.qps();
    }

    /** Requests sent so far, by all runs. */
    public long sent() {
        return sent.get();
    }

    /**
     * Round {@code round}'s prompt of user {@code user}: its tenant's system prompt, the user's history, each earlier round's
     * question and answer, and this round's question. A new array each call.
     */
    public int[] prompt(long user, int round) {
        checkRound(round);
        int[] prompt = new int[options.promptTokens(round)];
        int[] system = systemPrompts[tenant(user)];
        System.arraycopy(system, 0, prompt, 0, system.length);
        int at = system.length;
        TokenIds.fill(prompt, at, TokenIds.stream(options.seed(), HISTORY, user, 0), 0, options.historyTokens());
        at += options.historyTokens();
        for (int k = 0; k <= round; k++) {
            TokenIds.fill(prompt, at, TokenIds.stream(options.seed(), QUESTION, user, k), 0, options.questionTokens());
            at += options.questionTokens();
            if (k < round) {
                TokenIds.fill(prompt, at, TokenIds.stream(options.seed(), ANSWER, user, k), 0, options.answerTokens());
                at += options.answerTokens();
            }
        }
        return prompt;
    }

    /** The answer's ids the next round's prompt carries after round {@code round}'s prompt. */
    public int[] answer(long user, int round) {
        checkRound(round);
        int[] answer = new int[options.answerTokens()];
        TokenIds.fill(answer, 0, TokenIds.stream(options.seed(), ANSWER, user, round), 0, answer.length);
        return answer;
    }

    /** The request of round {@code round} of user {@code user}: named {@code user-<n>}. */
    public FleetRequest request(long user, int round) {
        return new FleetRequest("user-" + user, round, prompt(user, round), options.answerTokens());
    }

    private void checkRound(int round) {
        if (round < 0 || round >= options.rounds()) {
            throw new IllegalArgumentException("round " + round + " is outside 0.." + (options.rounds() - 1));
        }
    }

    /**
     * Runs the chats until {@code endNanos}, on the calling thread: it sleeps until the next user is due, and
     * answers wake it early (a late user sends as soon as its answer arrives).
     */
    @Override
    public void run(RequestSender sender, long endNanos, Consumer<RequestResult> results) throws InterruptedException {
        Objects.requireNonNull(sender, "sender");
        Objects.requireNonNull(results, "results");
        Thread pacer = Thread.currentThread();
        Slot[] slots = new Slot[options.users()];
        long start = clock.getAsLong();
        for (int i = 0; i < slots.length; i++) {
            int skipped = (int) ((long) i * options.rounds() / options.users());
            slots[i] = new Slot(i, start + Math.round(i / options.qps() * 1e9), options.rounds() - skipped);
        }
        while (true) {
            long now = clock.getAsLong();
            if (now - endNanos >= 0) {
                return;
            }
            Slot next = null;
            for (Slot s : slots) {
                if (s.readyAt() != Long.MAX_VALUE && (next == null || s.readyAt() - next.readyAt() < 0)) {
                    next = s;
                }
            }
            if (next != null && next.readyAt() - now <= 0) {
                next.send(sender, now, r -> {
                    results.accept(r);
                    LockSupport.unpark(pacer);
                });
            } else {
                sleeper.sleepUntil(next == null || next.readyAt() - endNanos > 0 ? endNanos : next.readyAt());
            }
        }
    }

    /**
     * One active user's place: its user, the round it sends next, when that is due, and the answer it waits for.
     * A finished user's place goes to a new user {@code users} numbers higher. Owned by the pacer thread, except the
     * answer, which completes on the client's.
     */
    private final class Slot {
        private long user;
        private int round;
        private int userRounds;
        private long dueNanos;
        private FleetRequest next;
        private CompletableFuture<RequestResult> answer;

        Slot(int index, long dueNanos, int userRounds) {
            this.user = options.firstUser() + index;
            this.userRounds = userRounds;
            this.dueNanos = dueNanos;
            this.next = request(user, 0);
        }

        /** When the next round may go: due, and the previous answer in; {@code MAX_VALUE} while it is out. */
        long readyAt() {
            if (answer == null) {
                return dueNanos;
            }
            if (!answer.isDone()) {
                return Long.MAX_VALUE;
            }
            long answered = answer.join().endNanos();
            return answered - dueNanos > 0 ? answered : dueNanos;
        }

        void send(RequestSender sender, long now, Consumer<RequestResult> results) {
            FleetRequest request = next;
            dueNanos = now + gapNanos;
            advance();
            sent.incrementAndGet();
            answer = sender.send(request);
            answer.thenAccept(results);
        }

        /** Makes the next request ahead of its time, so that sending it is quick; a finished user is replaced. */
        private void advance() {
            round++;
            if (round == userRounds) {
                user += options.users();
                round = 0;
                userRounds = options.rounds();
            }
            next = request(user, round);
        }
    }
}
