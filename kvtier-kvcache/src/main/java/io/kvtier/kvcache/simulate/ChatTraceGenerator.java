package io.kvtier.kvcache.simulate;

import java.util.SplittableRandom;

/**
 * Draws a {@link Trace} from {@link ChatTraceOptions}: every session's turns with their times, merged into one
 * stream in time order, so sessions interleave as on a real service and the reuse distance between two turns of
 * a session is what the other users asked meanwhile. Deterministic for a seed. Stateless.
 */
public final class ChatTraceGenerator {
    private ChatTraceGenerator() {
    }

    public static Trace generate(ChatTraceOptions o) {
        SplittableRandom random = new SplittableRandom(o.seed());
        double[] popularity = zipfCumulative(o.systemPrompts(), o.zipf());
        Trace.Builder trace = Trace.builder();
        double window = o.arrivalWindow().toNanos() / 1e9;
        double think = o.thinkTime().toNanos() / 1e9;
        for (int s = 0; s < o.sessions(); s++) {
            int prompt = draw(popularity, random.nextDouble());
            int turns = 1 + random.nextInt(2 * o.turns() - 1);
            double time = random.nextDouble() * window;
            long end = o.systemTokens(); // tokens before the next user message: system prompt + history
            for (int t = 0; t < turns; t++) {
                long promptTokens = end + around(o.userTokens(), random);
                long answer = around(o.answerTokens(), random);
                if (promptTokens + answer > o.maxContextTokens()) {
                    break;
                }
                trace.add("s" + s, t, time, promptTokens, answer, o.systemTokens() > 0 ? "p" + prompt : null,
                        o.systemTokens());
                end = promptTokens + answer;
                time += -Math.log(1 - random.nextDouble()) * think;
            }
        }
        return trace.build();
    }

    /** Uniform within +-50% of {@code mean}, at least 1. */
    private static long around(int mean, SplittableRandom random) {
        return Math.max(1, mean / 2 + random.nextInt(mean + 1));
    }

    /** P(rank k) ~ 1 / (k + 1)^s, as a cumulative table. */
    static double[] zipfCumulative(int n, double exponent) {
        double[] cumulative = new double[n];
        double sum = 0;
        for (int k = 0; k < n; k++) {
            sum += 1.0 / Math.pow(k + 1, exponent);
            cumulative[k] = sum;
        }
        for (int k = 0; k < n; k++) {
            cumulative[k] /= sum;
        }
        cumulative[n - 1] = 1.0;
        return cumulative;
    }

    static int draw(double[] cumulative, double u) {
        int i = java.util.Arrays.binarySearch(cumulative, u);
        return Math.min(i >= 0 ? i : -i - 1, cumulative.length - 1);
    }
}
