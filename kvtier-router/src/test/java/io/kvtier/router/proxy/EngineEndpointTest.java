package io.kvtier.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How {@code --engine} specs become engines: data-parallel ranks, bound event endpoints, and each rank's load. */
class EngineEndpointTest {
    @Test
    void aDataParallelServerIsOneEngineARankWithItsPortsOffsetByTheRank() {
        List<EngineEndpoint> ranks = EngineEndpoint.parseAll(
                "http://10.0.0.5:8000,events=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:5600,dp=2,dp-start=4");
        assertThat(ranks).extracting(EngineEndpoint::id).containsExactly("10.0.0.5:8000/dp4", "10.0.0.5:8000/dp5");
        assertThat(ranks).extracting(EngineEndpoint::events)
                .containsExactly("tcp://10.0.0.5:5561", "tcp://10.0.0.5:5562");
        assertThat(ranks).extracting(EngineEndpoint::replay)
                .containsExactly("tcp://10.0.0.5:5604", "tcp://10.0.0.5:5605");
        assertThat(ranks).extracting(EngineEndpoint::dpRank).containsExactly(4, 5);
        assertThat(EngineEndpoint.parse("http://h:8000,events=tcp://h:5557").dpRank()).isNull();
        assertThat(EngineEndpoint.parse("http://h:8000,events=tcp://h:5557").id()).isEqualTo("h:8000");
    }

    @Test
    void eventsOnAStarAreBoundByTheRouter() {
        assertThat(EngineEndpoint.parse("http://h:8000,events=tcp://*:6000").bindEvents()).isTrue();
        assertThat(EngineEndpoint.parse("http://h:8000,events=tcp://h:6000").bindEvents()).isFalse();
        assertThat(EngineEndpoint.parseAll("http://h:8000,events=tcp://*:6000,dp=2"))
                .extracting(EngineEndpoint::events).containsExactly("tcp://*:6000", "tcp://*:6001");
    }

    @Test
    void badSpecsAreRefusedSayingWhy() {
        assertThatThrownBy(() -> EngineEndpoint.parseAll("http://h:8000,dp=0")).hasMessageContaining("dp=0");
        assertThatThrownBy(() -> EngineEndpoint.parseAll("http://h:8000,dp-start=2")).hasMessageContaining("dp=");
        assertThatThrownBy(() -> EngineEndpoint.parseAll("http://h:8000,events=tcp://h:65535,dp=2"))
                .hasMessageContaining("65535");
        assertThatThrownBy(() -> EngineEndpoint.parseAll("http://h:8000,events=tcp://h:1,replay=tcp://*:2"))
                .hasMessageContaining("replay=");
        assertThatThrownBy(() -> EngineEndpoint.parse("http://h:8000,dp=2")).hasMessageContaining("2 engines");
        assertThatThrownBy(() -> EngineEndpoint.parseAll("http://h:8000,rank=1")).hasMessageContaining("rank=1");
    }

    @Test
    void aRanksLoadIsReadFromItsOwnSeries() {
        String metrics = """
                # TYPE vllm:num_requests_running gauge
                vllm:num_requests_running{engine="0",model_name="m"} 3.0
                vllm:num_requests_running{engine="1",model_name="m"} 1.0
                vllm:num_requests_waiting{engine="0",model_name="m"} 5.0
                vllm:num_requests_waiting{engine="1",model_name="m"} 0.0
                vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.9
                vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.2
                """;
        EngineState rank1 = new EngineState(EngineEndpoint.parseAll("http://h:8000,dp=2").get(1));
        Fleet.readLoad(rank1, metrics, 1);
        assertThat(rank1.running).isEqualTo(1.0);
        assertThat(rank1.waiting).isZero();
        assertThat(rank1.kvUsage).isEqualTo(0.2);
        EngineState whole = new EngineState(EngineEndpoint.parse("http://h:8000"));
        Fleet.readLoad(whole, metrics, null);
        assertThat(whole.running).isEqualTo(4.0);
        assertThat(whole.waiting).isEqualTo(5.0);
        assertThat(whole.kvUsage).isEqualTo(0.9);
    }

    @Test
    void anAddressFoundByDnsIsAsManyEnginesAsItsRanks() throws Exception {
        DnsDiscovery.Target t = DnsDiscovery.Target.parse("vllm.svc:8000,events=5557,replay=5600,dp=2");
        assertThat(t.at(java.net.InetAddress.getByName("10.0.0.7")))
                .extracting(EngineEndpoint::id, EngineEndpoint::events)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("10.0.0.7:8000/dp0", "tcp://10.0.0.7:5557"),
                        org.assertj.core.groups.Tuple.tuple("10.0.0.7:8000/dp1", "tcp://10.0.0.7:5558"));
        assertThat(DnsDiscovery.Target.parse("vllm.svc:8000").at(java.net.InetAddress.getByName("10.0.0.7")))
                .extracting(EngineEndpoint::id).containsExactly("10.0.0.7:8000");
        assertThatThrownBy(() -> DnsDiscovery.Target.parse("vllm.svc:8000,dp=0")).hasMessageContaining("dp=N");
    }

    @Test
    void addressesFoundByDnsThatPublishToTheRoutersPortAreToldApartByLlmdsTopic() throws Exception {
        DnsDiscovery.Target t = DnsDiscovery.Target.parse("vllm.svc:8000,events=*:5557,replay=5558");
        EngineEndpoint e = t.at(java.net.InetAddress.getByName("10.0.0.7")).getFirst();
        assertThat(e.bindEvents()).isTrue();
        assertThat(e.events()).isEqualTo("tcp://*:5557");
        assertThat(e.replay()).isEqualTo("tcp://10.0.0.7:5558");
        assertThat(e.topic()).isEqualTo("kv@10.0.0.7@");
        assertThat(DnsDiscovery.Target.parse("vllm.svc:8000,events=*:5557,topic=pods/{host}")
                .at(java.net.InetAddress.getByName("10.0.0.8")).getFirst().topic()).isEqualTo("pods/10.0.0.8");
        assertThat(DnsDiscovery.Target.parse("vllm.svc:8000,events=5557")
                .at(java.net.InetAddress.getByName("10.0.0.8")).getFirst().topic()).isEmpty();
        assertThatThrownBy(() -> DnsDiscovery.Target.parse("vllm.svc:8000,topic=x")).hasMessageContaining("events=");
    }
}
