package io.kvtier.cluster.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.cluster.Member;
import io.kvtier.cluster.Placement;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class TableAnnouncementTest {
    private static final List<Member> MEMBERS =
            List.of(new Member("node-a", 1_000, "10.0.0.1:6379"), new Member("node-é", 2_000, "[fd00::2]:6379"),
                    new Member("node-c", 3_000));

    @Test
    void roundTripsAndRecomputesTheSameTable() {
        TableAnnouncement announcement = new TableAnnouncement(7, MEMBERS, 2);

        byte[] bytes = announcement.encode();
        TableAnnouncement decoded = TableAnnouncement.decode(bytes);

        assertThat(decoded).isEqualTo(announcement);
        assertThat(decoded.table()).isEqualTo(Placement.compute(7, MEMBERS, 2));
        assertThat(bytes.length).isLessThan(150);
    }

    @Test
    void carriesEachMembersEndpoint() {
        TableAnnouncement decoded = TableAnnouncement.decode(new TableAnnouncement(7, MEMBERS, 2).encode());

        assertThat(decoded.members()).extracting(Member::endpoint)
                .containsExactly("10.0.0.1:6379", "[fd00::2]:6379", "");
        assertThat(decoded.table().members()).extracting(Member::endpoint)
                .containsExactly("10.0.0.1:6379", "", "[fd00::2]:6379"); // sorted by id: node-a, node-c, node-é
    }

    @Test
    void rejectsAMemberWithAnInvalidEndpoint() {
        byte[] bytes = new TableAnnouncement(7, List.of(new Member("node-a", 1, "h:6379")), 0).encode();
        bytes[bytes.length - 1] = 'x'; // "h:637x"

        assertThatThrownBy(() -> TableAnnouncement.decode(bytes))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("member node-a endpoint \"h:637x\" must be host:port, port a number");
    }

    @Test
    void rejectsTruncatedOtherKindsAndTrailingBytes() {
        byte[] bytes = new TableAnnouncement(7, MEMBERS, 2).encode();

        assertThatThrownBy(() -> TableAnnouncement.decode(Arrays.copyOf(bytes, bytes.length - 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
        byte[] otherKind = bytes.clone();
        otherKind[0] = SlotTableService.EPOCH_HINT_KIND;
        assertThatThrownBy(() -> TableAnnouncement.decode(otherKind))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("kind 2");
        assertThatThrownBy(() -> TableAnnouncement.decode(Arrays.copyOf(bytes, bytes.length + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("trailing");
    }

    @Test
    void rejectsNonPositiveEpochs() {
        assertThatThrownBy(() -> new TableAnnouncement(0, MEMBERS, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("epoch 0");
    }
}
