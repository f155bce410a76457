package io.kvtier.bench.fleet;

import java.util.concurrent.CompletableFuture;

/** Sends a request to the fleet; the future completes (never exceptionally) with what the client saw. Thread-safe. */
public interface RequestSender {
    CompletableFuture<RequestResult> send(FleetRequest request);
}
