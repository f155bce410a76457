package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.HostPort;
import org.junit.jupiter.api.Test;

class ClusterErrorTest {
    private static final HostPort FROM = new HostPort("127.0.0.1", 7001);

    @Test
    void movedNamesTheSlotAndItsNewPrimary() {
        assertThat(ClusterError.parse("MOVED 3999 127.0.0.1:7002", FROM))
                .isEqualTo(new ClusterError.Moved(3999, new HostPort("127.0.0.1", 7002)));
    }

    @Test
    void anEmptyHostMeansTheHostOfTheNodeThatAnswered() {
        assertThat(ClusterError.parse("MOVED 12 :7003", FROM))
                .isEqualTo(new ClusterError.Moved(12, new HostPort("127.0.0.1", 7003)));
        assertThat(ClusterError.parse("ASK 12 :7003", FROM))
                .isEqualTo(new ClusterError.Ask(12, new HostPort("127.0.0.1", 7003)));
    }

    @Test
    void anIpv6TargetKeepsItsColons() {
        assertThat(ClusterError.parse("MOVED 7 ::1:7004", FROM))
                .isEqualTo(new ClusterError.Moved(7, new HostPort("::1", 7004)));
    }

    @Test
    void askIsARedirectForOneCommandNotAMove() {
        assertThat(ClusterError.parse("ASK 3999 127.0.0.1:7002", FROM))
                .isEqualTo(new ClusterError.Ask(3999, new HostPort("127.0.0.1", 7002)));
    }

    @Test
    void tryAgainAndClusterDownKeepTheirMessage() {
        String tryAgain = "TRYAGAIN this node is installing a newer slot table; retry";
        assertThat(ClusterError.parse(tryAgain, FROM)).isEqualTo(new ClusterError.TryAgain(tryAgain));
        assertThat(ClusterError.parse("CLUSTERDOWN Hash slot not served", FROM))
                .isEqualTo(new ClusterError.ClusterDown("CLUSTERDOWN Hash slot not served"));
    }

    @Test
    void otherErrorsAreKnownByTheirFirstWord() {
        assertThat(ClusterError.parse("CROSSSLOT Keys in request don't hash to the same slot", FROM).code())
                .isEqualTo("CROSSSLOT");
        assertThat(ClusterError.parse("OOM", FROM)).isEqualTo(new ClusterError.Other("OOM", "OOM"));
        assertThat(ClusterError.code("ERR unknown command")).isEqualTo("ERR");
    }

    @Test
    void aMalformedRedirectIsNotFollowedButStillCountsAsItsKind() {
        for (String malformed : new String[] {"MOVED", "MOVED x 127.0.0.1:7002", "MOVED 16384 127.0.0.1:7002",
            "MOVED 1 127.0.0.1:0", "MOVED 1 nohost", "ASK 1 2 3"}) {
            ClusterError e = ClusterError.parse(malformed, FROM);
            assertThat(e).as(malformed).isInstanceOf(ClusterError.Other.class);
            assertThat(e.code()).as(malformed).isEqualTo(malformed.substring(0, malformed.indexOf(' ') > 0
                    ? malformed.indexOf(' ') : malformed.length()));
        }
    }
}
