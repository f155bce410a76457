package io.kvtier.bench.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.HostPort;
import org.junit.jupiter.api.Test;

class RedirectTest {
    private static final HostPort FROM = new HostPort("127.0.0.1", 7001);

    @Test
    void movedNamesTheSlotAndItsNewPrimary() {
        assertThat(Redirect.parse("MOVED 3999 127.0.0.1:7002", FROM))
                .contains(new Redirect(3999, new HostPort("127.0.0.1", 7002)));
    }

    @Test
    void anEmptyHostMeansTheHostOfTheNodeThatAnswered() {
        assertThat(Redirect.parse("MOVED 12 :7003", FROM)).contains(new Redirect(12, new HostPort("127.0.0.1", 7003)));
    }

    @Test
    void anIpv6TargetKeepsItsColons() {
        assertThat(Redirect.parse("MOVED 7 ::1:7004", FROM)).contains(new Redirect(7, new HostPort("::1", 7004)));
    }

    @Test
    void otherErrorsAreNotRedirects() {
        assertThat(Redirect.parse("TRYAGAIN this node is installing a newer slot table; retry", FROM)).isEmpty();
        assertThat(Redirect.parse("CLUSTERDOWN Hash slot not served", FROM)).isEmpty();
        assertThat(Redirect.parse("ASK 3999 127.0.0.1:7002", FROM)).isEmpty();
    }

    @Test
    void aMalformedMovedIsNotFollowed() {
        assertThat(Redirect.parse("MOVED", FROM)).isEmpty();
        assertThat(Redirect.parse("MOVED x 127.0.0.1:7002", FROM)).isEmpty();
        assertThat(Redirect.parse("MOVED 16384 127.0.0.1:7002", FROM)).isEmpty();
        assertThat(Redirect.parse("MOVED 1 127.0.0.1:0", FROM)).isEmpty();
        assertThat(Redirect.parse("MOVED 1 nohost", FROM)).isEmpty();
    }
}
