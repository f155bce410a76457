package io.kvtier.router.proxy;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the router knows of one engine: health, the model it serves, its load (its own vLLM metrics, scraped, plus
 * the requests the router has in flight there). Fields are written by the fleet's poller and the request threads,
 * read by the policies; each is independently current.
 */
public final class EngineState {
    final EngineEndpoint endpoint;
    final AtomicInteger inFlight = new AtomicInteger();
    /** Prompt tokens of the requests the router has in flight there (Dynamo's router tracks its active blocks so). */
    final AtomicLong activeTokens = new AtomicLong();
    /**
     * Prompt tokens the router expects the engine still to compute for the requests it sent there: each request's
     * estimate ({@link Policy.Choice#computeTokens(int)}) from when it is sent until its answer's first byte.
     */
    final AtomicLong pendingPrefill = new AtomicLong();
    /** As {@link #pendingPrefill}, the seconds of loads (CPU-tier reloads, kvtier fetches) expected, in nanoseconds. */
    final AtomicLong pendingLoadNanos = new AtomicLong();
    final AtomicLong requests = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final java.util.concurrent.atomic.AtomicBoolean probing = new java.util.concurrent.atomic.AtomicBoolean();
    volatile boolean healthy;
    volatile String model;
    volatile double running;
    volatile double waiting;
    volatile double kvUsage;
    volatile long lastOkNanos;
    volatile String lastError = "not probed yet";
    /** Its probe's schedule; cancelled when it leaves the fleet. */
    volatile java.util.concurrent.ScheduledFuture<?> probe;
    volatile boolean removed;

    EngineState(EngineEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    public String id() {
        return endpoint.id();
    }

    public boolean healthy() {
        return healthy;
    }

    public String model() {
        return model;
    }

    /** Requests queued there (vLLM's num_requests_waiting, as scraped). */
    public double waiting() {
        return waiting;
    }

    /** The share of its KV cache in use (vLLM's kv_cache_usage_perc, 0 to 1, as scraped). */
    public double kvUsage() {
        return kvUsage;
    }

    /** Prompt tokens of the requests the router has in flight there. */
    public long activeTokens() {
        return activeTokens.get();
    }

    /** Prompt tokens the engine is expected still to prefill for requests the router sent it (none answered yet). */
    public long pendingPrefillTokens() {
        return pendingPrefill.get();
    }

    /** Seconds of loads the engine is expected still to do for requests the router sent it (none answered yet). */
    public double pendingLoadSeconds() {
        return pendingLoadNanos.get() / 1e9;
    }

    /** Requests queued or running there: the engine's own count where it was scraped, or the router's own if higher. */
    public double load() {
        return Math.max(running + waiting, inFlight.get());
    }
}
