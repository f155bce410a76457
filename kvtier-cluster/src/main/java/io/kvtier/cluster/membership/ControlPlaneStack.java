package io.kvtier.cluster.membership;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jgroups.protocols.FD_ALL3;
import org.jgroups.protocols.FD_SOCK2;
import org.jgroups.protocols.FRAG4;
import org.jgroups.protocols.MERGE3;
import org.jgroups.protocols.PerDestinationBundler;
import org.jgroups.protocols.TCP;
import org.jgroups.protocols.TCPPING;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.VERIFY_SUSPECT2;
import org.jgroups.protocols.dns.DNS_PING;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.protocols.pbcast.NAKACK2;
import org.jgroups.protocols.pbcast.STABLE;
import org.jgroups.protocols.raft.RAFT;
import org.jgroups.protocols.raft.REDIRECT;
import org.jgroups.stack.Protocol;

/**
 * The JGroups protocol stack of kvtier's control plane, built in code from {@link ClusterOptions} so that every
 * setting sits next to the reason for it. Only small control messages (discovery, heartbeats, views, the Raft log of
 * the cluster's configuration) travel here; values go over kvtier's own Netty connections. Stateless.
 */
final class ControlPlaneStack {
    /** How long a joiner waits for seeds to answer; a new cluster's first node waits this long, then leads. */
    static final long JOIN_TIMEOUT_MS = 2_000;
    /** Lower bound of the heartbeat interval and of the verification timeout, whatever the failure timeout. */
    private static final long MIN_PROBE_MS = 25;
    /** Upper bound of the verification of a suspect: a live member answers within milliseconds on a LAN. */
    private static final long MAX_VERIFY_MS = 250;

    private ControlPlaneStack() {
    }

    /** The protocols, transport first (the order {@code JChannel(List)} expects). */
    static List<Protocol> build(ClusterOptions options) throws IOException {
        InetAddress bind = InetAddress.getByName(options.bindHost());
        long timeout = options.failureTimeout().toMillis();
        List<Protocol> stack = new ArrayList<>();
        stack.add(transport(options, bind));
        if (options.links() != null) {
            stack.add(new FilteredLinks(options.links())); // in-JVM fault tests only: see LinkFilter
        }
        stack.add(discovery(options, bind));
        if (options.dnsQuery() != null) {
            stack.add(dnsDiscovery(options.dnsQuery()));
        }
        stack.addAll(List.of(
                // Heals splits: after a partition (or two nodes that bootstrapped at once) each side has its own
                // coordinator; MERGE3 has coordinators find each other and merge into one view. Every member
                // announces its view every 0.5-2 s and the coordinators compare what they heard every 2.5 s, so a
                // healed node is back in the view within about 3 s (with 1-5 s and the computed 8 s check, a cut Raft
                // leader took 11 s after the heal; issue 28). A few bytes per member and second.
                new MERGE3().setMinInterval(500).setMaxInterval(2_000).setCheckInterval(2_500),
                // Fast path of failure detection: a TCP connection to the next member in the ring. When a process
                // dies (crash, kill -9) its kernel closes that socket, so the neighbour suspects it at once instead
                // of waiting for the heartbeat timeout. Binds next to the transport (default port offset 100,
                // trying 5 ports).
                new FD_SOCK2().setBindAddress(bind),
                // Slow path: every member multicasts a heartbeat each interval; one silent for the failure timeout
                // is suspected. Catches what FD_SOCK2 cannot: a hung process, a dead host or a cut cable, where no
                // FIN/RST ever arrives. Four heartbeats per timeout so one lost or late heartbeat is not fatal.
                new FD_ALL3().setTimeout(timeout).setInterval(Math.max(MIN_PROBE_MS, timeout / 4)),
                // Before excluding a suspect, ask it directly once more; a node back from a GC pause answers and
                // stays. Short, because every suspicion has waited already: FD_ALL3's comes after the whole failure
                // timeout, FD_SOCK2's only once the suspect's socket closed. This wait is most of the time from a
                // kill -9 to the new view, and so to the dead node's keys being served again.
                new VERIFY_SUSPECT2().setTimeout(Math.clamp(timeout / 4, MIN_PROBE_MS, MAX_VERIFY_MS)),
                // Reliable, ordered multicast (retransmission by sequence number): views and merge messages must
                // reach every member exactly once and in order. Defaults are sized for far more traffic than ours.
                new NAKACK2(),
                // Reliable, ordered unicast: join requests/responses and VERIFY_SUSPECT2 probes go point to point.
                new UNICAST3(),
                // Garbage-collects messages that every member has received, so NAKACK2's retransmit buffers stay
                // small.
                new STABLE(),
                // Group membership: joins, leaves, exclusions and view installation, led by the coordinator (the
                // oldest member). We log views ourselves, in kvtier's terms, hence no printing of local addresses.
                new GMS().setJoinTimeout(JOIN_TIMEOUT_MS).printLocalAddress(false),
                // Splits the rare large message (a view of many members with their ExtendedUUID keys, a Raft
                // snapshot) into transport-sized fragments. UFC/MFC flow control is left out: control traffic is a
                // trickle.
                new FRAG4(),
                // Raft's leader election (ADR 0005), with the pre-vote round: a node cut off and back does not
                // depose a working leader by bumping the term. Elections run among the view's members; a leader
                // needs a majority of the configured voters, not of the view.
                new ControlPlaneElection(),
                raft(options),
                // Lets any member, voter or learner, propose a command: it is forwarded to the leader.
                new REDIRECT()));
        return List.copyOf(stack);
    }

    /**
     * The Raft protocol: this node's id, the voters of a new cluster (the log's own record wins once there is one),
     * the log under the state directory, written with fsync (a term or vote forgotten after a power loss could elect
     * two leaders in one term).
     */
    private static RAFT raft(ClusterOptions options) throws IOException {
        Path dir = options.stateDir();
        if (dir == null) {
            // No state directory (in-JVM tests): a log no later process can use, removed when this one exits (the
            // test JVMs left hundreds of them in /tmp).
            dir = Files.createTempDirectory("kvtier-raft-" + options.nodeId().replaceAll("[^A-Za-z0-9_.-]", "_"));
            Path temporary = dir;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(temporary), "kvtier-raft-temp-cleanup"));
        }
        Files.createDirectories(dir);
        RAFT raft = new RAFT();
        raft.raftId(options.nodeId());
        raft.members(options.voters());
        raft.logDir(dir.toString());
        raft.logPrefix("config");
        raft.logUseFsync(true);
        // send_commits_immediately stays off: with it, leader and follower were seen to ping-pong empty appends until
        // the leader's processing queue was full (jgroups-raft 1.1.4). Followers learn the commit index with the next
        // append, and renewals (four per lease per node) keep appends coming.
        // How often the leader sends a lagging follower its next entry. While new entries keep coming (every node
        // renews four times a lease), jgroups-raft catches a follower up one entry per interval, so the interval must
        // be well under the time between entries: at the default 1 s a restarted node never caught up, at 100 ms it
        // took 15-20 s (ClusterNemesisIT); at 10 ms, a second or so.
        raft.resendInterval(10);
        return raft;
    }

    private static TCP transport(ClusterOptions options, InetAddress bind) {
        TCP tcp = new ControlPlaneTcp(); // views do not wait for closes to cut-off members (see there)
        // A send to a member that is silently cut off must not hold up the sends to everyone else: heartbeats and
        // Raft appends to the reachable members would stall behind it and they would suspect each other. Each peer
        // connection gets its own bounded queue and sender thread; a full queue drops (NAKACK2/UNICAST3 resend).
        tcp.nonBlockingSends(true);
        tcp.maxSendQueue(256);
        // And a sender thread per destination in the bundler too: JGroups' default (one thread for all) connects to
        // a member on that thread, so while a cut-off member's connect timed out (every sock_conn_timeout, as long as
        // anything is sent to it: discovery, merge probes) every other member's messages waited, and a Raft leader
        // elected after a partition committed nothing for seconds (ClusterPartitionIT with the leader cut off).
        tcp.setBundler(new PerDestinationBundler().useSingleSenderThread(false));
        // Connecting to a cut-off member gives up well before the failure timeout.
        tcp.setSockConnTimeout((int) Math.clamp(options.failureTimeout().toMillis() / 4, 100, 1_000));
        // The address peers connect to: must be reachable from every other node (not 0.0.0.0).
        tcp.setBindAddress(bind);
        tcp.setBindPort(options.clusterPort());
        // Exactly this port or fail: seeds name exact ports, so silently taking the next free one would make this
        // node unreachable under the address the others were configured with.
        tcp.setPortRange(0);
        return tcp;
    }

    private static TCPPING discovery(ClusterOptions options, InetAddress bind) {
        List<InetSocketAddress> hosts = new ArrayList<>(options.resolvedSeeds());
        if (options.clusterPort() != 0) {
            // Ourselves too, so that one seed list can be shared by every node (a seed listing itself is harmless).
            hosts.add(new InetSocketAddress(bind, options.clusterPort()));
        }
        // Static discovery: no multicast (often unavailable in clouds and containers); ask the seeds who leads.
        TCPPING ping = new TCPPING();
        ping.setInitialHosts(hosts);
        // Each seed is an exact host:port; do not also probe the ports above it.
        ping.setPortRange(0);
        return ping;
    }

    /**
     * Discovery through a Kubernetes headless Service: its name resolves to the addresses of the ready pods. Sits
     * above TCPPING; JGroups asks every discovery protocol in the stack and merges the answers, so seeds still work.
     */
    private static DNS_PING dnsDiscovery(String query) {
        DNS_PING ping = new DNS_PING();
        ping.dnsQuery(query);
        // A headless Service has one A record per ready pod. A records carry no port, so DNS_PING sends each address
        // a request at the transport's own bind port and port range (read from TCP at init): every pod listens on
        // the same --cluster-port, and the transport's port range of 0 makes that exactly one port per address.
        ping.dnsRecordType("A");
        // dns_address stays empty: A lookups then go through the JVM's resolver (the pod's resolv.conf, the hosts
        // file), like any other host name, rather than a DNS server named here.
        // The name is resolved again on every run: pods that start together appear in DNS over a few seconds, and a
        // later run within the join timeout still finds the ones whose records were not there yet.
        ping.numDiscoveryRuns(3);
        return ping;
    }

    /** Deletes {@code dir} and what it holds, as far as it can: a temporary directory. */
    private static void deleteTree(Path dir) {
        try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // best effort: a temporary directory
        }
    }
}
