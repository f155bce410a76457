package io.kvtier.server.metrics;

/**
 * INFO's instantaneous_ops_per_sec and instantaneous_input/output_kbps, computed as Redis computes them: a sample of
 * each counter every {@link #PERIOD_MILLIS} ms, the rate since the previous sample kept in a ring of
 * {@link #SAMPLES}, and the mean of the ring reported. Sampled by one scheduled task, read by INFO on any thread.
 */
public final class InstantaneousRates {
    public static final long PERIOD_MILLIS = 100;
    static final int SAMPLES = 16;
    private static final int OPS = 0;
    private static final int INPUT = 1;
    private static final int OUTPUT = 2;
    private final double[][] rates = new double[3][SAMPLES];
    private final long[] last = new long[3];
    private long lastNanos = -1;
    private int next;

    /** Takes one sample of the three counters, read at {@code nanos} ({@link System#nanoTime()}). */
    public synchronized void sample(long nanos, long commands, long inputBytes, long outputBytes) {
        long[] now = {commands, inputBytes, outputBytes};
        if (lastNanos >= 0 && nanos > lastNanos) {
            double seconds = (nanos - lastNanos) / 1e9;
            for (int i = 0; i < now.length; i++) {
                // A counter zeroed by CONFIG RESETSTAT reads lower than before: no rate from that interval.
                rates[i][next] = Math.max(0, now[i] - last[i]) / seconds;
            }
            next = (next + 1) % SAMPLES;
        }
        System.arraycopy(now, 0, last, 0, now.length);
        lastNanos = nanos;
    }

    public synchronized long opsPerSecond() {
        return (long) mean(OPS);
    }

    public synchronized double inputKbps() {
        return mean(INPUT) / 1024;
    }

    public synchronized double outputKbps() {
        return mean(OUTPUT) / 1024;
    }

    private double mean(int counter) {
        double sum = 0;
        for (double r : rates[counter]) {
            sum += r;
        }
        return sum / SAMPLES;
    }
}
