package io.kvtier.bench.report;

import java.util.Map;
import java.util.Objects;

/**
 * How a run was made: target, load shape and the workload's parameters, so a result file explains itself.
 * Immutable.
 *
 * @param startedAt   ISO-8601 instant the run started
 * @param target      {@code host:port}
 * @param workload    workload name
 * @param connections connections opened
 * @param pipeline    requests each connection keeps in flight
 * @param rate        open-loop rate in requests/s, or NaN for a closed loop
 * @param verify      whether values were self-describing and every GET checked
 * @param seed        seed of every pseudo-random choice
 * @param latency     how latency was measured (closed-loop service time, or open-loop from the intended send time)
 * @param parameters  the workload's parameters, as text (sizes, limits, LMCache shape...)
 */
public record RunInfo(String startedAt, String target, String workload, int connections, int pipeline,
        double rate, boolean verify, long seed, String latency, Map<String, String> parameters) {

    public RunInfo {
        Objects.requireNonNull(startedAt, "startedAt");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(latency, "latency");
        parameters = Map.copyOf(parameters);
    }

    public boolean openLoop() {
        return !Double.isNaN(rate);
    }

    /** The sentence that says how latencies were measured, for reports and {@link #latency}. */
    public static String latencyNote(int connections, int pipeline, double rate) {
        if (Double.isNaN(rate)) {
            return "closed loop (" + connections + " connections x " + pipeline + " in flight): latencies are"
                    + " service times from send start to the last reply byte; a request waits for a free slot"
                    + " before its clock starts, so server stalls are not charged to the requests that would have"
                    + " been sent during them (coordinated omission); use --rate for open-loop latencies";
        }
        return "open loop at " + rate + " requests/s (at most " + connections + " connections x " + pipeline
                + " in flight): latencies run from each request's intended send time on the fixed schedule to"
                + " the last reply byte, so stalls are charged to every request that should have been sent"
                + " during them (coordinated omission corrected)";
    }
}
