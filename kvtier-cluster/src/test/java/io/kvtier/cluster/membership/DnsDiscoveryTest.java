package io.kvtier.cluster.membership;

import static io.kvtier.cluster.ClusterTesting.freePorts;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.Member;
import java.util.List;
import java.util.UUID;
import org.jgroups.protocols.TCPPING;
import org.jgroups.protocols.dns.DNS_PING;
import org.jgroups.stack.Protocol;
import org.junit.jupiter.api.Test;

/**
 * DNS discovery as for a Kubernetes headless Service, on loopback only. DNS_PING asks each resolved address at this
 * node's own cluster port, so two nodes on one host (one address, two ports) cannot find each other through it; the
 * test checks the stack's settings and that a node discovering by DNS founds its cluster cleanly.
 */
class DnsDiscoveryTest {
    @Test
    void stackForADnsQueryHasADnsPingForARecordsAboveTcpPing() throws Exception {
        ClusterOptions options = ClusterOptions.of("node-a", 1, 7800, List.of()).withDnsQuery("kvtier.default.svc");

        List<Protocol> stack = ControlPlaneStack.build(options);

        assertThat(stack).extracting(p -> p.getClass().getSimpleName()).containsSubsequence("ControlPlaneTcp", "TCPPING",
                "DNS_PING", "MERGE3");
        DNS_PING ping = (DNS_PING) stack.stream().filter(DNS_PING.class::isInstance).findFirst().orElseThrow();
        assertThat(ping.dnsQuery()).isEqualTo("kvtier.default.svc");
        assertThat(ping.dnsRecordType()).isEqualTo("A");
        assertThat(ping.dnsAddress()).isEmpty();
    }

    @Test
    void stackWithoutADnsQueryDiscoversBySeedsAlone() throws Exception {
        List<Protocol> stack = ControlPlaneStack.build(ClusterOptions.of("node-a", 1, 7800, List.of()));

        assertThat(stack).filteredOn(DNS_PING.class::isInstance).isEmpty();
        assertThat(stack).filteredOn(TCPPING.class::isInstance).hasSize(1);
    }

    @Test
    void nodeDiscoveringByDnsFoundsAOneMemberCluster() throws Exception {
        ClusterOptions options = ClusterOptions.of("node-a", 1, freePorts(1)[0], List.of())
                .withClusterName("kvtier-test-" + UUID.randomUUID()).withEndpoint("127.0.0.1:16001")
                .withDnsQuery("localhost");

        try (Membership node = Membership.join(options, (viewId, members) -> { })) {
            assertThat(node.members()).containsExactly(new Member("node-a", 1, "127.0.0.1:16001"));
            assertThat(node.isCoordinator()).isTrue();
            DNS_PING ping = node.channel().getProtocolStack().findProtocol(DNS_PING.class);
            assertThat(ping.dnsQuery()).isEqualTo("localhost");
        }
    }
}
