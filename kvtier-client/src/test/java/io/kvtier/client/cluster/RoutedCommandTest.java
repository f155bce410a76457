package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.client.ConnectionClosedException;
import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.kvtier.client.RespTimeoutException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class RoutedCommandTest {
    @Test
    void aSuccessOrAMissIsNoError() {
        assertThat(RoutedCommand.errorKind(new Reply.Simple("OK"), null)).isNull();
        assertThat(RoutedCommand.errorKind(new Reply.Null(), null)).isNull();
    }

    @Test
    void anErrorReplyIsKnownByItsFirstWord() {
        assertThat(RoutedCommand.errorKind(new Reply.Error("TRYAGAIN replication to n2 failed"), null))
                .isEqualTo("TRYAGAIN");
        assertThat(RoutedCommand.errorKind(new Reply.Error("CLUSTERDOWN Hash slot not served"), null))
                .isEqualTo("CLUSTERDOWN");
        assertThat(RoutedCommand.errorKind(new Reply.Error("OOM"), null)).isEqualTo("OOM");
    }

    @Test
    void failuresAreTimeoutsClosedConnectionsOrUnreachableNodes() {
        assertThat(RoutedCommand.errorKind(null, new TimeoutException("x"))).isEqualTo("timeout");
        assertThat(RoutedCommand.errorKind(null, new CompletionException(new RespTimeoutException("h:1",
                Duration.ofSeconds(1))))).isEqualTo("timeout");
        assertThat(RoutedCommand.errorKind(null, new ConnectionClosedException("reset", null))).isEqualTo("closed");
        assertThat(RoutedCommand.errorKind(null, new RoutedCommand.UnreachableException(
                new HostPort("127.0.0.1", 7002), new ConnectException("refused")))).isEqualTo("unreachable");
    }
}
