package io.kvtier.cluster.membership;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.cluster.Member;
import java.nio.charset.StandardCharsets;
import org.jgroups.util.ExtendedUUID;
import org.jgroups.util.UUID;
import org.junit.jupiter.api.Test;

class MemberAddressTest {
    @Test
    void decodesTheMemberAnAddressAdvertises() {
        Member member = new Member("node-a", 123_456_789_000L, "10.1.2.3:6379");

        assertThat(MemberAddress.decode(MemberAddress.of(member))).contains(member);
    }

    @Test
    void decodesAnUnknownEndpoint() {
        Member member = new Member("node-a", 1);

        assertThat(MemberAddress.decode(MemberAddress.of(member))).contains(member);
    }

    @Test
    void readsAnAddressWithoutTheEndpointKeyAsAnUnknownEndpoint() {
        ExtendedUUID older = ExtendedUUID.randomUUID()
                .put(MemberAddress.ID_KEY, "node-a".getBytes(StandardCharsets.UTF_8))
                .put(MemberAddress.WEIGHT_KEY, "5".getBytes(StandardCharsets.UTF_8));

        assertThat(MemberAddress.decode(older)).contains(new Member("node-a", 5, ""));
    }

    @Test
    void ignoresAddressesThatAdvertiseNoValidMember() {
        assertThat(MemberAddress.decode(UUID.randomUUID())).isEmpty();
        assertThat(MemberAddress.decode(ExtendedUUID.randomUUID())).isEmpty();
        ExtendedUUID zeroWeight = ExtendedUUID.randomUUID()
                .put(MemberAddress.ID_KEY, "node-a".getBytes(StandardCharsets.UTF_8))
                .put(MemberAddress.WEIGHT_KEY, "0".getBytes(StandardCharsets.UTF_8));
        assertThat(MemberAddress.decode(zeroWeight)).isEmpty();
        ExtendedUUID badEndpoint = ExtendedUUID.randomUUID()
                .put(MemberAddress.ID_KEY, "node-a".getBytes(StandardCharsets.UTF_8))
                .put(MemberAddress.WEIGHT_KEY, "1".getBytes(StandardCharsets.UTF_8))
                .put(MemberAddress.ENDPOINT_KEY, "no-port".getBytes(StandardCharsets.UTF_8));
        assertThat(MemberAddress.decode(badEndpoint)).isEmpty();
    }
}
