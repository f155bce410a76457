package io.kvtier.bench.fleet;

/**
 * A request pattern of the fleet benchmark at one rate: multi-round chats ({@link MultiRoundQa}) or a trace replayed on
 * its timestamps ({@link MooncakeTrace}).
 */
public interface FleetWorkload {
    /** What the rate of this point means, for tables: e.g. {@code 4.0 req/s} or {@code trace x2.0}. */
    String rateLabel();

    /** The rate this point targets, requests per second over the whole fleet (for plots' x axis). */
    double requestsPerSecond();

    /**
     * Sends requests through {@code sender} from now until {@code endNanos} ({@link System#nanoTime()}), returning then
     * (requests still running are not awaited; the caller collects their results), or earlier when it has nothing
     * more to send (a trace replayed once, {@link MooncakeTrace.Replay}). Every result, of every request sent, goes
     * to {@code results}, from whatever thread completes it.
     */
    void run(RequestSender sender, long endNanos, java.util.function.Consumer<RequestResult> results)
            throws InterruptedException;
}
