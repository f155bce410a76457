package io.kvtier.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.server.TestNode;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ClientLimit}: what the open-file limit leaves for clients once the node's own descriptors are set aside. */
class ClientLimitTest {
    @TempDir
    Path dir;

    @Test
    void lowersMaxClientsToWhatTheOpenFileLimitLeaves() throws IOException {
        ClientLimit limit = ClientLimit.of(256, 100, 10_000);
        assertThat(limit.effective()).isEqualTo(156);
        assertThat(limit.reduced()).isTrue();
    }

    @Test
    void keepsMaxClientsWhenTheLimitHasRoom() throws IOException {
        assertThat(ClientLimit.of(1 << 20, 100, 10_000).effective()).isEqualTo(10_000);
        assertThat(ClientLimit.of(-1, 100, 10_000).effective()).as("limit unknown").isEqualTo(10_000);
        assertThat(ClientLimit.of(1 << 20, 100, 10_000).reduced()).isFalse();
    }

    @Test
    void refusesToStartWhenNoClientFits() {
        assertThatThrownBy(() -> ClientLimit.of(100, 100, 10_000)).isInstanceOf(IOException.class)
                .hasMessage("the open-file limit 100 leaves no room for clients: kvtier keeps 100 descriptors for "
                        + "itself; raise it with ulimit -n (at least 101, or 10100 for --max-clients 10000)");
    }

    @Test
    void setsAsideTheOpenDescriptorsTheRegionsToComeAndRedisMargin() throws IOException {
        ServerOptions options = TestNode.options(dir, null, 10_000); // 32 MiB disk in regions of 2 MiB (memory / 2)
        long open = ((com.sun.management.UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getOpenFileDescriptorCount();
        ClientLimit limit = ClientLimit.compute(options, 1, 16);
        assertThat(ClientLimit.regionsToCome(options)).isEqualTo(32 / 2 + 2);
        assertThat(limit.reserved()).isGreaterThanOrEqualTo(open + 18 + 1 + 17 + ClientLimit.MIN_RESERVED - 5);
        assertThat(limit.effective()).isEqualTo((int) Math.min(10_000, limit.fdLimit() - limit.reserved()));
    }
}
