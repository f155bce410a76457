package io.kvtier.testkit.jepsen;

/**
 * One operation on one register (a key): a write of {@code value}, or a read that returned {@code value} (null: the
 * key had no value), with the {@link System#nanoTime()} of its invocation and completion and its {@link Outcome}.
 * {@code process} names the client that ran it, for reports only.
 */
public record Op(String process, Kind kind, String value, long invokeNanos, long completeNanos, Outcome outcome) {
    /** What the operation did. */
    public enum Kind { WRITE, READ }

    /**
     * How it ended. {@code OK}: it took effect between invocation and completion. {@code FAIL}: it definitely did not
     * take effect (the server said it did not run, e.g. -TRYAGAIN, -CLUSTERDOWN, -MOVED). {@code INFO}: unknown (a
     * timeout, a broken connection, -UNREPLICATED): it may take effect at any time after its invocation, or never.
     */
    public enum Outcome { OK, FAIL, INFO }

    public static Op write(String process, String value, long invokeNanos, long completeNanos, Outcome outcome) {
        return new Op(process, Kind.WRITE, value, invokeNanos, completeNanos, outcome);
    }

    public static Op read(String process, String value, long invokeNanos, long completeNanos, Outcome outcome) {
        return new Op(process, Kind.READ, value, invokeNanos, completeNanos, outcome);
    }

    /** The operation in one line, times in ms since {@code originNanos}. */
    public String describe(long originNanos) {
        String what = kind == Kind.WRITE ? "write " + show(value) : "read -> " + show(value);
        String end = outcome == Outcome.INFO ? "?" : String.format("%.1f", (completeNanos - originNanos) / 1e6);
        return String.format("%s %s [%.1f, %s ms] %s", process, what, (invokeNanos - originNanos) / 1e6, end,
                outcome.name().toLowerCase(java.util.Locale.ROOT));
    }

    private static String show(String v) {
        return v == null ? "nil" : "'" + v + "'";
    }
}
