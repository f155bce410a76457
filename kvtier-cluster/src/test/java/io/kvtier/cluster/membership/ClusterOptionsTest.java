package io.kvtier.cluster.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterOptionsTest {
    @Test
    void nullsTakeTheDefaults() {
        ClusterOptions options = ClusterOptions.of("a", 1, 7800, null);

        assertThat(options.bindHost()).isEqualTo("127.0.0.1");
        assertThat(options.seeds()).isEmpty();
        assertThat(options.failureTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(options.clusterName()).isEqualTo("kvtier");
        assertThat(options.endpoint()).isEmpty();
        assertThat(options.dnsQuery()).isNull();
    }

    @Test
    void withHelpersKeepTheOtherComponents() {
        ClusterOptions options = ClusterOptions.of("a", 1, 7800, List.of("h:7800")).withEndpoint("10.0.0.1:6379")
                .withDnsQuery("kvtier.default.svc").withClusterName("c").withFailureTimeout(Duration.ofSeconds(1))
                .withVoters(List.of("a", "b")).withLease(Duration.ofMillis(700)).withStateDir(Path.of("/d/raft"));

        assertThat(options).isEqualTo(new ClusterOptions("a", 1, null, 7800, List.of("h:7800"), Duration.ofSeconds(1),
                "c", "10.0.0.1:6379", "kvtier.default.svc", List.of("a", "b"), Duration.ofMillis(700),
                Path.of("/d/raft")));
    }

    @Test
    void aNodeWithoutSeedsOrVotersIsASingleNodeClusterAndOneWithSeedsJoinsAsALearner() {
        assertThat(ClusterOptions.of("a", 1, 0, List.of()).voters()).containsExactly("a");
        assertThat(ClusterOptions.of("a", 1, 7800, List.of("h:7800")).voters()).isEmpty();
        assertThat(ClusterOptions.of("a", 1, 0, List.of()).lease()).isEqualTo(Duration.ofSeconds(1));
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of()).withLease(Duration.ofMillis(50)))
                .withMessage("--lease 50ms is outside 100ms..60s");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of()).withVoters(List.of("a", " ")))
                .withMessage("--voters has a blank node id");
    }

    @Test
    void acceptsHostPortAndBracketedIpv6Endpoints() {
        ClusterOptions options = ClusterOptions.of("a", 1, 0, List.of());

        assertThat(options.withEndpoint("kvtier-0.kvtier:6379").endpoint()).isEqualTo("kvtier-0.kvtier:6379");
        assertThat(options.withEndpoint("[::1]:6379").endpoint()).isEqualTo("[::1]:6379");
        assertThat(options.withEndpoint(null).endpoint()).isEmpty();
    }

    @Test
    void rejectsAnEndpointThatIsNotHostColonPort() {
        ClusterOptions options = ClusterOptions.of("a", 1, 0, List.of());

        assertThatIllegalArgumentException().isThrownBy(() -> options.withEndpoint("hostonly"))
                .withMessage("--announce \"hostonly\" must be host:port");
        assertThatIllegalArgumentException().isThrownBy(() -> options.withEndpoint(":6379"))
                .withMessage("--announce \":6379\" must be host:port");
        assertThatIllegalArgumentException().isThrownBy(() -> options.withEndpoint("h:redis"))
                .withMessage("--announce \"h:redis\" must be host:port, port a number");
        assertThatIllegalArgumentException().isThrownBy(() -> options.withEndpoint("h:70000"))
                .withMessage("--announce \"h:70000\" port 70000 must be in 1..65535");
    }

    @Test
    void rejectsABlankDnsQueryOrOneWithoutAFixedClusterPort() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClusterOptions.of("a", 1, 7800, List.of()).withDnsQuery(" "))
                .withMessage("--dns-query \" \" must not be blank");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of()).withDnsQuery("kvtier.default.svc"))
                .withMessageStartingWith("--dns-query \"kvtier.default.svc\" needs a fixed --cluster-port, not 0");
    }

    @Test
    void rejectsABlankNodeId() {
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterOptions.of(" ", 1, 0, List.of()))
                .withMessage("--node-id \" \" must not be blank");
    }

    @Test
    void rejectsANonPositiveWeight() {
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterOptions.of("a", 0, 0, List.of()))
                .withMessage("--weight 0 must be at least 1");
    }

    @Test
    void rejectsAPortOutOfRange() {
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterOptions.of("a", 1, 65536, List.of()))
                .withMessage("--cluster-port 65536 must be in 0..65535");
    }

    @Test
    void rejectsSeedsThatAreNotHostColonPort() {
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of("hostonly")))
                .withMessage("--seeds entry \"hostonly\" must be host:port");
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of("h:x")))
                .withMessage("--seeds entry \"h:x\" must be host:port, port a number");
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of("h:0")))
                .withMessage("--seeds entry \"h:0\" port 0 must be in 1..65535");
        assertThatIllegalArgumentException().isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of("h:65536")))
                .withMessage("--seeds entry \"h:65536\" port 65536 must be in 1..65535");
    }

    @Test
    void acceptsBracketedIpv6Seeds() {
        assertThat(ClusterOptions.of("a", 1, 0, List.of("[::1]:7800", "10.0.0.1:7800")).seeds()).hasSize(2);
    }

    @Test
    void rejectsAFailureTimeoutBelow100ms() {
        ClusterOptions options = ClusterOptions.of("a", 1, 0, List.of());

        assertThatIllegalArgumentException().isThrownBy(() -> options.withFailureTimeout(Duration.ZERO))
                .withMessage("--failure-timeout 0ms must be at least 100ms");
        assertThat(options.withFailureTimeout(Duration.ofMillis(100)).failureTimeout()).hasMillis(100);
    }

    @Test
    void rejectsABlankBindHostOrClusterName() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new ClusterOptions("a", 1, "", 0, List.of(), null, null, null, null, null, null,
                        null))
                .withMessage("--bind \"\" must not be blank");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> ClusterOptions.of("a", 1, 0, List.of()).withClusterName(" "))
                .withMessage("--cluster-name \" \" must not be blank");
    }
}
