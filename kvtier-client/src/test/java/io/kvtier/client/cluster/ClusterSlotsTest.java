package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.client.HostPort;
import io.kvtier.client.Reply;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClusterSlotsTest {
    private static final HostPort ASKED = new HostPort("127.0.0.1", 7001);

    static Reply bulk(String s) {
        return new Reply.Bulk(Unpooled.copiedBuffer(s, StandardCharsets.UTF_8));
    }

    static Reply node(String host, int port) {
        return new Reply.Aggregate('*', List.of(bulk(host), new Reply.Int(port), bulk("0123456789abcdef")));
    }

    static Reply range(int start, int end, Reply... nodes) {
        List<Reply> e = new java.util.ArrayList<>(List.of(new Reply.Int(start), new Reply.Int(end)));
        e.addAll(List.of(nodes));
        return new Reply.Aggregate('*', e);
    }

    @Test
    void readsEachRangeWithItsPrimaryAndReplicas() {
        Reply reply = new Reply.Aggregate('*', List.of(
                range(0, 5460, node("127.0.0.1", 7001), node("127.0.0.1", 7002)),
                range(5461, 16383, node("127.0.0.1", 7002))));

        List<SlotRange> ranges = ClusterSlots.parse(reply, ASKED);

        assertThat(ranges).containsExactly(
                new SlotRange(0, 5460, new HostPort("127.0.0.1", 7001), List.of(new HostPort("127.0.0.1", 7002))),
                new SlotRange(5461, 16383, new HostPort("127.0.0.1", 7002), List.of()));
        Reply.release(reply);
    }

    @Test
    void anEmptyHostMeansTheNodeThatWasAsked() {
        Reply reply = new Reply.Aggregate('*', List.of(range(0, 16383, node("", 7003))));

        assertThat(ClusterSlots.parse(reply, ASKED).getFirst().primary()).isEqualTo(new HostPort("127.0.0.1", 7003));
    }

    @Test
    void anErrorReplyIsQuotedSoTheUserSeesWhyTheNodeRefused() {
        assertThatThrownBy(() -> ClusterSlots.parse(new Reply.Error("ERR This instance has cluster support disabled"),
                ASKED)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("127.0.0.1:7001 answered CLUSTER SLOTS with 'ERR This instance has cluster");
    }

    @Test
    void aReplyOfAnotherShapeIsRefusedNamingWhatIsWrong() {
        assertThatThrownBy(() -> ClusterSlots.parse(new Reply.Int(3), ASKED))
                .hasMessageContaining("the reply is not an array");
        assertThatThrownBy(() -> ClusterSlots.parse(new Reply.Aggregate('*', List.of(range(0, 10))), ASKED))
                .hasMessageContaining("expected start, end and at least the primary");
        assertThatThrownBy(() -> ClusterSlots.parse(new Reply.Aggregate('*', List.of(range(10, 16384,
                node("h", 1)))), ASKED)).hasMessageContaining("10..16384 is not within 0..16383");
    }

    @Test
    void anEmptyReplyIsNoRanges() {
        assertThat(ClusterSlots.parse(new Reply.Aggregate('*', List.of()), ASKED)).isEmpty();
    }
}
