package io.kvtier.router.proxy;

import java.time.Duration;
import java.util.List;

/**
 * How the router runs: where it listens, the engines behind it, the policy, and its bounds. Validated on construction.
 *
 * @param requestTimeout the longest the router holds a client: past it the request is cut, streamed or not
 * @param maxImbalance   how many more requests than the least loaded engine a prefix holder may have and still win
 */
public record RouterOptions(String host, int port, List<EngineEndpoint> engines, String policy,
        Duration requestTimeout, Duration probeInterval, Duration probeTimeout, int maxBodyBytes, int maxImbalance,
        int maxAttempts, List<KvtierEndpoint> kvtier, io.kvtier.router.map.LmcacheSettings lmcache,
        StoreAwarePolicy.Costs costs) {
    public RouterOptions {
        engines = List.copyOf(engines);
        kvtier = List.copyOf(kvtier);
        lmcache = lmcache == null ? io.kvtier.router.map.LmcacheSettings.defaults() : lmcache;
        costs = costs == null ? StoreAwarePolicy.Costs.defaults() : costs;
        if (engines.isEmpty()) {
            throw new IllegalArgumentException("give at least one --engine URL");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port " + port + " is not a port");
        }
        if (requestTimeout.isNegative() || requestTimeout.isZero() || probeInterval.toMillis() < 10
                || probeTimeout.toMillis() < 10) {
            throw new IllegalArgumentException("timeouts and the probe interval must be at least 10 ms");
        }
        if (maxBodyBytes < 1024 || maxBodyBytes > (1 << 30) || maxAttempts < 1 || maxImbalance < 0) {
            throw new IllegalArgumentException("--max-body must be 1 KiB to 1 GiB, --attempts at least 1, "
                    + "--max-imbalance not negative");
        }
        Policy.named(policy, null, 0); // names a policy, or says which there are
    }
}
