package io.kvtier.cli.router;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.router.proxy.EngineEndpoint;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The --engine options as the router takes them: one engine per id, bound event ports shared only by topic. */
class RouterEnginesTest {
    @Test
    void enginesSharingABoundPortEachNeedATopicOfTheirOwn() {
        List<EngineEndpoint> shared = RouterCommand.engineEndpoints(List.of(
                "http://10.0.0.5:8000,events=tcp://*:5557,topic=kv@{host}@",
                "http://10.0.0.6:8000,events=tcp://*:5557,topic=kv@{host}@"));
        assertThat(shared).extracting(EngineEndpoint::topic).containsExactly("kv@10.0.0.5@", "kv@10.0.0.6@");
        assertThat(shared).allMatch(EngineEndpoint::bindEvents);

        assertThatThrownBy(() -> RouterCommand.engineEndpoints(List.of("http://10.0.0.5:8000,events=tcp://*:5557",
                "http://10.0.0.6:8000,events=tcp://*:5557"))).hasMessageContaining("is bound for 10.0.0.5:8000")
                .hasMessageContaining("topic=kv@{host}@");
        assertThatThrownBy(() -> RouterCommand.engineEndpoints(List.of(
                "http://10.0.0.5:8000,events=tcp://*:5557,topic=kv@x@",
                "http://10.0.0.6:8000,events=tcp://*:5557,topic=kv@x@"))).hasMessageContaining("a topic of their own");
        assertThatThrownBy(() -> RouterCommand.engineEndpoints(List.of(
                "http://10.0.0.5:8000,events=tcp://*:5557,topic=kv@a@",
                "http://10.0.0.6:8000,events=tcp://*:5557"))).hasMessageContaining("a topic of their own");
        // ports of their own need no topic; nor do endpoints the engines bind
        assertThat(RouterCommand.engineEndpoints(List.of("http://10.0.0.5:8000,events=tcp://*:5557",
                "http://10.0.0.6:8000,events=tcp://*:5558", "http://10.0.0.7:8000,events=tcp://10.0.0.7:5557",
                "http://10.0.0.8:8000,events=tcp://10.0.0.8:5557"))).hasSize(4);
    }

    @Test
    void oneIdIsOneEngine() {
        assertThatThrownBy(() -> RouterCommand.engineEndpoints(List.of("http://h:8000", "http://h:8000/")))
                .hasMessageContaining("named twice").hasMessageContaining("dp=N");
        assertThatThrownBy(() -> RouterCommand.engineEndpoints(List.of("http://h:8000,topic=kv@h@")))
                .hasMessageContaining("topic= needs events=");
    }
}
