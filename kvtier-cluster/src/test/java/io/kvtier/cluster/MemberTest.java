package io.kvtier.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

import io.kvtier.client.cluster.SlotHash;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemberTest {
    @Test
    void twoArgumentConstructorLeavesTheEndpointUnknown() {
        assertThat(new Member("a", 1).endpoint()).isEmpty();
    }

    @Test
    void splitsTheEndpointIntoHostAndPort() {
        Member member = new Member("a", 1, "kvtier-0.kvtier.default.svc:6379");

        assertThat(member.host()).isEqualTo("kvtier-0.kvtier.default.svc");
        assertThat(member.port()).isEqualTo(6379);
    }

    @Test
    void acceptsABracketedIpv6Endpoint() {
        Member member = new Member("a", 1, "[::1]:6379");

        assertThat(member.host()).isEqualTo("::1");
        assertThat(member.port()).isEqualTo(6379);
    }

    @Test
    void hasNoHostOrPortWhenTheEndpointIsUnknown() {
        Member member = new Member("a", 1);

        assertThatIllegalStateException().isThrownBy(member::host).withMessage("member a advertises no endpoint");
        assertThatIllegalStateException().isThrownBy(member::port).withMessage("member a advertises no endpoint");
    }

    @Test
    void rejectsInvalidEndpoints() {
        assertThatNullPointerException().isThrownBy(() -> new Member("a", 1, null)).withMessage("member endpoint");
        assertThatIllegalArgumentException().isThrownBy(() -> new Member("a", 1, "hostonly"))
                .withMessage("member a endpoint \"hostonly\" must be host:port");
        assertThatIllegalArgumentException().isThrownBy(() -> new Member("a", 1, "h:port"))
                .withMessage("member a endpoint \"h:port\" must be host:port, port a number");
        assertThatIllegalArgumentException().isThrownBy(() -> new Member("a", 1, "h:0"))
                .withMessage("member a endpoint \"h:0\" port 0 must be in 1..65535");
        assertThatIllegalArgumentException().isThrownBy(() -> new Member("a", 1, "[]:6379"))
                .withMessage("member a endpoint \"[]:6379\" must be host:port");
    }

    @Test
    void placementIgnoresEndpoints() {
        List<Member> bare = List.of(new Member("a", 1), new Member("b", 3), new Member("c", 2));
        List<Member> announced = List.of(new Member("a", 1, "10.0.0.1:6379"), new Member("b", 3, "10.0.0.2:6379"),
                new Member("c", 2, "10.0.0.3:7000"));

        SlotTable withoutEndpoints = Placement.compute(4, bare, 1);
        SlotTable withEndpoints = Placement.compute(4, announced, 1);

        for (int slot = 0; slot < SlotHash.SLOTS; slot++) {
            assertThat(withEndpoints.owners(slot)).extracting(Member::id)
                    .isEqualTo(withoutEndpoints.owners(slot).stream().map(Member::id).toList());
        }
    }
}
