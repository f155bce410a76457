package io.kvtier.client.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Keys map to the slots Redis Cluster gives them: vectors from Redis's crc16.c, cluster spec and tests. */
class SlotHashTest {
    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int slot(String key) {
        return SlotHash.slot(bytes(key));
    }

    private static int crc16Slot(String key) {
        return SlotHash.crc16(bytes(key)) & (SlotHash.SLOTS - 1);
    }

    @Test
    void computesTheXmodemCrc16OfTheStandardCheckString() {
        assertThat(SlotHash.crc16(bytes("123456789"))).isEqualTo(0x31C3);
    }

    @Test
    void mapsFooAndBarToTheSlotsRedisGivesThem() {
        assertThat(slot("foo")).isEqualTo(12182);
        assertThat(slot("bar")).isEqualTo(5061);
    }

    @Test
    void hashesOnlyTheHashTagSoTaggedKeysShareASlot() {
        assertThat(slot("{user1000}.following")).isEqualTo(slot("{user1000}.followers")).isEqualTo(slot("user1000"));
    }

    @Test
    void hashesTheWholeKeyWhenTheFirstHashTagIsEmpty() {
        assertThat(slot("foo{}{bar}")).isEqualTo(crc16Slot("foo{}{bar}"));
    }

    @Test
    void hashesUpToTheFirstClosingBraceAfterTheFirstOpeningBrace() {
        assertThat(slot("foo{{bar}}zap")).isEqualTo(crc16Slot("{bar"));
    }

    @Test
    void usesOnlyTheFirstHashTag() {
        assertThat(slot("foo{bar}{zap}")).isEqualTo(slot("bar"));
    }

    @Test
    void hashesTheWholeKeyWhenABraceIsNeverClosed() {
        assertThat(slot("foo{bar")).isEqualTo(crc16Slot("foo{bar"));
        assertThat(slot("foo}bar{")).isEqualTo(crc16Slot("foo}bar{"));
    }

    @Test
    void mapsTheEmptyKeyToSlotZero() {
        assertThat(SlotHash.slot(new byte[0])).isZero();
    }

    @Test
    void keepsEveryKeyWithinTheSlotRange() {
        Random random = new Random(1);
        for (int i = 0; i < 10_000; i++) {
            byte[] key = new byte[random.nextInt(64)];
            random.nextBytes(key);
            assertThat(SlotHash.slot(key)).isBetween(0, SlotHash.SLOTS - 1);
        }
    }
}
