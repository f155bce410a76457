package io.kvtier.router.proxy;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Engines found by DNS, as behind a Kubernetes headless Service: every interval each name is resolved, each address
 * becomes an engine ({@code http://ADDRESS:PORT}, its events and replay on the given ports of the same address),
 * addresses new since the last resolution join the fleet and addresses gone leave it (their map entries dropped).
 * A failed resolution changes nothing (a DNS outage must not empty the fleet; dead engines fail their health probes
 * anyway), and is logged once per streak. Resolutions run on a thread of their own, one at a time.
 */
public final class DnsDiscovery implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DnsDiscovery.class);

    /**
     * A name to resolve: {@code NAME:PORT[,events=[*:]PORT][,replay=PORT][,topic=T][,dp=N]}, e.g.
     * {@code vllm.inference.svc.cluster.local:8000,events=5557,replay=5558}; {@code dp=N}: each address is a
     * data-parallel server of N ranks, an engine per rank (as {@link EngineEndpoint} takes {@code dp=}).
     * {@code events=*:PORT}: the router binds PORT and every address's publisher connects to it (llm-d's centralized
     * mode), each address's engine taking the messages under {@code topic=} ({@code {host}} its address), by default
     * llm-d's {@code kv@{host}@}.
     */
    public record Target(String name, int port, int eventsPort, int replayPort, int dp, boolean bindEvents,
                         String topic) {
        public Target(String name, int port, int eventsPort, int replayPort) {
            this(name, port, eventsPort, replayPort, 0, false, "");
        }

        public static Target parse(String spec) {
            String[] parts = spec.split(",");
            io.kvtier.client.HostPort name = io.kvtier.client.HostPort.parse(parts[0], "--engine-dns");
            int events = -1;
            int replay = -1;
            int dp = 0;
            boolean bind = false;
            String topic = null;
            for (int i = 1; i < parts.length; i++) {
                if (parts[i].startsWith("events=*:")) {
                    events = port(spec, parts[i].substring("events=*:".length()));
                    bind = true;
                } else if (parts[i].startsWith("events=")) {
                    events = port(spec, parts[i].substring("events=".length()));
                } else if (parts[i].startsWith("topic=")) {
                    topic = parts[i].substring("topic=".length());
                } else if (parts[i].startsWith("replay=")) {
                    replay = port(spec, parts[i].substring("replay=".length()));
                } else if (parts[i].matches("dp=[0-9]{1,4}") && Integer.parseInt(parts[i].substring(3)) >= 1) {
                    dp = Integer.parseInt(parts[i].substring(3));
                } else {
                    throw new IllegalArgumentException("--engine-dns " + spec + ": " + parts[i]
                            + " is none of events=[*:]PORT, replay=PORT, topic=T, dp=N");
                }
            }
            if (replay >= 0 && events < 0) {
                throw new IllegalArgumentException("--engine-dns " + spec + ": replay= needs events= too");
            }
            if (topic != null && events < 0) {
                throw new IllegalArgumentException("--engine-dns " + spec + ": topic= needs events= too");
            }
            return new Target(name.host(), name.port(), events, replay, dp, bind,
                    topic != null ? topic : bind ? "kv@{host}@" : "");
        }

        private static int port(String spec, String p) {
            try {
                int port = Integer.parseInt(p);
                if (port > 0 && port < 65536) {
                    return port;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new IllegalArgumentException("--engine-dns " + spec + ": " + p + " is not a port");
        }

        /** The engines at {@code address}: one, or one per data-parallel rank. */
        List<EngineEndpoint> at(InetAddress address) {
            String host = address instanceof Inet6Address ? "[" + address.getHostAddress() + "]"
                    : address.getHostAddress();
            return EngineEndpoint.parseAll("http://" + host + ":" + port
                    + (eventsPort < 0 ? "" : ",events=tcp://" + (bindEvents ? "*" : host) + ":" + eventsPort)
                    + (replayPort < 0 ? "" : ",replay=tcp://" + host + ":" + replayPort)
                    + (topic.isEmpty() ? "" : ",topic=" + topic)
                    + (dp > 0 ? ",dp=" + dp : ""));
        }
    }

    /** Resolves a name to its addresses (InetAddress.getAllByName; tests give their own). */
    public interface Resolver {
        List<InetAddress> resolve(String name) throws UnknownHostException;
    }

    private final List<Target> targets;
    private final Fleet fleet;
    private final Resolver resolver;
    private final ScheduledExecutorService timer;
    /** Per target, the engine ids it added and still has in the fleet. */
    private final Map<Target, Set<String>> found = new ConcurrentHashMap<>();
    private final Map<Target, Boolean> failing = new ConcurrentHashMap<>();

    public DnsDiscovery(List<Target> targets, Fleet fleet, Duration interval, Resolver resolver) {
        this.targets = List.copyOf(targets);
        this.fleet = fleet;
        this.resolver = resolver;
        this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("router-dns")
                .factory());
        timer.scheduleWithFixedDelay(this::resolveAll, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The JDK's resolver. Its cache is the JVM's (networkaddress.cache.ttl); the router sets it below the interval. */
    public static Resolver system() {
        return name -> List.of(InetAddress.getAllByName(name));
    }

    void resolveAll() {
        for (Target t : targets) {
            List<InetAddress> addresses;
            try {
                addresses = resolver.resolve(t.name());
            } catch (UnknownHostException | RuntimeException e) {
                if (failing.put(t, Boolean.TRUE) == null) {
                    log.warn("engines at {}: DNS resolution failed ({}); keeping the {} engines found before", t.name(),
                            e.toString(), found.getOrDefault(t, Set.of()).size());
                }
                continue;
            }
            if (failing.remove(t) != null) {
                log.info("engines at {}: DNS answers again", t.name());
            }
            Set<String> now = new LinkedHashSet<>();
            List<EngineEndpoint> endpoints = new ArrayList<>();
            for (InetAddress a : addresses) {
                for (EngineEndpoint e : t.at(a)) {
                    if (now.add(e.id())) {
                        endpoints.add(e);
                    }
                }
            }
            Set<String> before = found.computeIfAbsent(t, x -> ConcurrentHashMap.newKeySet());
            for (EngineEndpoint e : endpoints) {
                if (!before.contains(e.id()) && fleet.add(e)) {
                    before.add(e.id());
                    log.info("engine {} found at {}", e.id(), t.name());
                }
            }
            for (String id : new HashSet<>(before)) {
                if (!now.contains(id)) {
                    fleet.remove(id);
                    before.remove(id);
                    log.info("engine {} left {}: removed", id, t.name());
                }
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
