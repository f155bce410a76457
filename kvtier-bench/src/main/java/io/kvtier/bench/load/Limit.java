package io.kvtier.bench.load;

import java.time.Duration;
import java.util.Objects;

/** How long a phase runs: a number of requests, or a duration. Immutable. */
public sealed interface Limit {
    /** No requests at all: a warm-up that is switched off. */
    static Limit none() {
        return new Requests(0);
    }

    /** Whether request {@code index}, due {@code dueNanos} after the phase started, may still be issued. */
    boolean admits(long index, long dueNanos);

    /** How far a phase is, 0..1, after {@code started} requests and {@code elapsedNanos}. */
    double fraction(long started, long elapsedNanos);

    boolean isNone();

    /** Exactly {@code count} requests. */
    record Requests(long count) implements Limit {
        public Requests {
            if (count < 0) {
                throw new IllegalArgumentException("request count " + count + " is negative");
            }
        }

        @Override
        public boolean admits(long index, long dueNanos) {
            return index < count;
        }

        @Override
        public double fraction(long started, long elapsedNanos) {
            return count == 0 ? 1 : Math.min(1, (double) started / count);
        }

        @Override
        public boolean isNone() {
            return count == 0;
        }

        @Override
        public String toString() {
            return count + " requests";
        }
    }

    /** Requests due before {@code duration} has passed since the phase started. */
    record Timed(Duration duration) implements Limit {
        public Timed {
            Objects.requireNonNull(duration, "duration");
            if (duration.isNegative()) {
                throw new IllegalArgumentException("duration " + duration + " is negative");
            }
        }

        @Override
        public boolean admits(long index, long dueNanos) {
            return dueNanos < duration.toNanos();
        }

        @Override
        public double fraction(long started, long elapsedNanos) {
            return duration.isZero() ? 1 : Math.min(1, (double) elapsedNanos / duration.toNanos());
        }

        @Override
        public boolean isNone() {
            return duration.isZero();
        }

        @Override
        public String toString() {
            return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + "s" : duration.toMillis() + "ms";
        }
    }
}
