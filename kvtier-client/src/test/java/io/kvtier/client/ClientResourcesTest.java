package io.kvtier.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ClientResourcesTest {
    @Test
    void startsTheRequestedNumberOfThreadsAndStopsThemOnClose() {
        ClientResources resources = ClientResources.create(3);

        assertThat(resources.group()).hasSize(3);
        resources.close();
        resources.close();

        assertThat(resources.group().isTerminated()).isTrue();
    }

    @Test
    void refusesANegativeThreadCount() {
        assertThatThrownBy(() -> ClientResources.create(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ioThreads -1 is negative (0 means Netty's default)");
    }

    @Test
    void failsToConnectOnceClosed() {
        ClientResources resources = ClientResources.create(1);
        resources.close();

        assertThatThrownBy(() -> RespConnection.connect(resources, "127.0.0.1", 6379, ClientOptions.defaults())
                .get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
    }
}
