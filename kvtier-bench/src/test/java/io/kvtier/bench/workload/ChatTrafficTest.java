package io.kvtier.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChatTrafficTest {

    @Test
    void promptsGrowByOneUserTurnAndOneReplyPerTurn() {
        ChatTraffic traffic = new ChatTraffic(LmcacheSpecTest.small(), 1);
        assertThat(traffic.promptTokens(0)).isEqualTo(40 + 8);
        assertThat(traffic.promptTokens(3)).isEqualTo(40 + 3 * 24 + 8);
    }

    @Test
    void eachRequestsChunksAreItsPromptSplitIntoFullChunks() {
        ChatTraffic traffic = new ChatTraffic(LmcacheSpecTest.small(), 1);
        for (int i = 0; i < 100; i++) {
            ChatTurn turn = traffic.next();
            assertThat(turn.promptTokens()).isEqualTo(traffic.promptTokens(turn.turn()));
            assertThat(turn.chunkKeys()).hasSize(turn.promptTokens() / 16);
        }
    }

    @Test
    void aConversationsNextTurnStartsWithTheChunksOfItsLastOne() {
        ChatTraffic traffic = new ChatTraffic(LmcacheSpecTest.small(), 5);
        Map<Integer, ChatTurn> last = new HashMap<>();
        int extended = 0;
        for (int i = 0; i < 300; i++) {
            ChatTurn turn = traffic.next();
            ChatTurn before = last.put(turn.conversation(), turn);
            if (before != null && before.generation() == turn.generation()) {
                assertThat(turn.turn()).isEqualTo(before.turn() + 1);
                assertThat(turn.chunkKeys()).startsWith(before.chunkKeys().toArray(String[]::new));
                extended++;
            }
        }
        assertThat(extended).isGreaterThan(100);
    }

    @Test
    void everyConversationSharesTheSystemPromptsChunks() {
        ChatTraffic traffic = new ChatTraffic(LmcacheSpecTest.small(), 5);
        List<String> first = traffic.next().chunkKeys().subList(0, 2);
        for (int i = 0; i < 50; i++) {
            assertThat(traffic.next().chunkKeys().subList(0, 2)).isEqualTo(first);
        }
    }

    @Test
    void aConversationOutgrowingTheContextStartsOverWithNewChunks() {
        ChatTraffic traffic = new ChatTraffic(LmcacheSpecTest.small(), 5);
        List<ChatTurn> zero = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            ChatTurn turn = traffic.next();
            assertThat(turn.promptTokens()).isLessThanOrEqualTo(200);
            if (turn.conversation() == 0) {
                zero.add(turn);
            }
        }
        ChatTurn restarted = zero.stream().filter(t -> t.generation() == 1 && t.turn() == 0).findFirst().orElseThrow();
        ChatTurn original = zero.getFirst();
        assertThat(original.turn()).isZero();
        assertThat(restarted.chunkKeys().get(2)).isNotEqualTo(original.chunkKeys().get(2));
        assertThat(restarted.chunkKeys().subList(0, 2)).isEqualTo(original.chunkKeys().subList(0, 2));
    }

    @Test
    void theSameSeedGivesTheSameRequests() {
        ChatTraffic a = new ChatTraffic(LmcacheSpecTest.small(), 9);
        ChatTraffic b = new ChatTraffic(LmcacheSpecTest.small(), 9);
        for (int i = 0; i < 200; i++) {
            assertThat(a.next()).isEqualTo(b.next());
        }
    }

    @Test
    void popularConversationsAreDrawnMoreOften() {
        ChatTraffic traffic = new ChatTraffic(LmcacheSpecTest.small(), 11);
        int[] counts = new int[8];
        for (int i = 0; i < 4000; i++) {
            counts[traffic.next().conversation()]++;
        }
        assertThat(counts[0]).isGreaterThan(counts[3]).isGreaterThan(counts[7]);
    }
}
