package io.kvtier.router.proxy;

import java.time.Duration;
import java.util.List;

/**
 * How the router runs: where it listens, the engines behind it, the policy, and its bounds. Validated on construction.
 *
 * @param requestTimeout the longest the router holds a client: past it the request is cut, streamed or not
 * @param maxImbalance   how many more requests than the least loaded engine a prefix holder may have and still win
 * @param engineDns      names resolved for engines ({@link DnsDiscovery}), besides the static {@code engines}
 * @param dnsInterval    how often they are resolved
 */
public record RouterOptions(String host, int port, List<EngineEndpoint> engines, String policy,
        Duration requestTimeout, Duration probeInterval, Duration probeTimeout, int maxBodyBytes, int maxImbalance,
        int maxAttempts, List<KvtierEndpoint> kvtier, io.kvtier.router.map.LmcacheSettings lmcache,
        StoreAwarePolicy.Costs costs, List<DnsDiscovery.Target> engineDns, Duration dnsInterval) {
    public RouterOptions {
        engines = List.copyOf(engines);
        engineDns = engineDns == null ? List.of() : List.copyOf(engineDns);
        dnsInterval = dnsInterval == null ? Duration.ofSeconds(5) : dnsInterval;
        kvtier = List.copyOf(kvtier);
        lmcache = lmcache == null ? io.kvtier.router.map.LmcacheSettings.defaults() : lmcache;
        costs = costs == null ? StoreAwarePolicy.Costs.defaults() : costs;
        if (engines.isEmpty() && engineDns.isEmpty()) {
            throw new IllegalArgumentException("give at least one --engine URL or --engine-dns NAME:PORT");
        }
        if (dnsInterval.toMillis() < 100) {
            throw new IllegalArgumentException("--dns-interval must be at least 100 ms");
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
