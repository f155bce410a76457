package io.kvtier.store.policy;

import static io.kvtier.store.policy.TestNode.victims;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The store's eviction order on crafted sequences whose answer is known: chunks by recency, small values S3-FIFO. */
class KvCachePolicyTest {
    private static final long MIB = 1 << 20;
    /** Ten chunks of 1 MiB. */
    private static final long CAPACITY = 10 * MIB;

    private static TestNode chunk(long key) {
        return new TestNode(key, MIB);
    }

    @Test
    void chunksLeaveByRecencyWhereS3FifoForgetsASecondRead() {
        // Ten chunks written, each read once as its conversation comes back, then chunk 5 read again: by recency
        // 5 leaves last. S3-FIFO moves them from probation to main in write order and forgets the second read.
        KvCachePolicy kv = new KvCachePolicy(CAPACITY, 100);
        S3FifoPolicy s3 = new S3FifoPolicy(CAPACITY, 100);
        List<TestNode> kvNodes = new ArrayList<>();
        List<TestNode> s3Nodes = new ArrayList<>();
        for (long k = 0; k < 10; k++) {
            kvNodes.add(chunk(k));
            s3Nodes.add(chunk(k));
            kv.add(kvNodes.get((int) k));
            s3.add(s3Nodes.get((int) k));
        }
        for (int k = 0; k < 10; k++) { // every chunk read once, oldest first, as conversations come back
            kv.touch(kvNodes.get(k));
            s3.touch(s3Nodes.get(k));
        }
        // Chunk 5 read again: by recency it leaves last.
        kv.touch(kvNodes.get(5));
        s3.touch(s3Nodes.get(5));
        assertThat(victims(kv, 10)).containsExactly(0L, 1L, 2L, 3L, 4L, 6L, 7L, 8L, 9L, 5L);
        // S3-FIFO keeps them all on probation (all hit once) and moves them to main in write order: 5 is not last.
        assertThat(victims(s3, 10)).doesNotHaveDuplicates().last().isNotEqualTo(5L);
    }

    @Test
    void chunksSkipProbationAndAOneHitChunkLeavesByAgeNotAtOnce() {
        KvCachePolicy policy = new KvCachePolicy(CAPACITY, 100);
        TestNode read = chunk(1);
        policy.add(read);
        TestNode unread = chunk(2);
        policy.add(unread);
        assertThat(read.queue).as("a chunk enters main").isEqualTo((byte) 2);
        assertThat(unread.queue).isEqualTo((byte) 2);
        for (long k = 10; k < 14; k++) {
            policy.add(chunk(k));
        }
        policy.touch(read);
        // Neither leaves at once for being unread (S3-FIFO's probation would drop chunk 2 first of all): the read
        // chunk 1 moved to the fresh end, and the unread chunk 2 is now simply the least recently used.
        assertThat(victims(policy, 6)).containsExactly(2L, 10L, 11L, 12L, 13L, 1L);
    }

    @Test
    void aPromptReadTogetherStaysTogetherBehindEverythingWrittenBefore() {
        KvCachePolicy policy = new KvCachePolicy(CAPACITY, 100);
        List<TestNode> prompt = new ArrayList<>();
        for (long k = 0; k < 4; k++) { // turn 1 writes a prompt of four chunks
            prompt.add(chunk(k));
            policy.add(prompt.get((int) k));
        }
        for (long k = 100; k < 104; k++) { // other conversations meanwhile
            policy.add(chunk(k));
        }
        prompt.forEach(policy::touch); // turn 2 looks the prompt up: all four read, in order
        assertThat(victims(policy, 8)).containsExactly(100L, 101L, 102L, 103L, 0L, 1L, 2L, 3L);
    }

    @Test
    void aHitCountedWithoutTheLockGivesAChunkAnotherRound() {
        // The store tries the policy lock on a hit without waiting; when it is busy the hit is only counted.
        KvCachePolicy policy = new KvCachePolicy(CAPACITY, 100);
        TestNode counted = chunk(0);
        policy.add(counted);
        policy.add(chunk(1));
        counted.recordAccess();
        assertThat(victims(policy, 2)).containsExactly(1L, 0L);
    }

    @Test
    void aScanOfSmallKeysFlushesNeitherTheHotSmallKeysNorTheChunks() {
        KvCachePolicy policy = new KvCachePolicy(CAPACITY, 10_000);
        long small = 1 << 10;
        List<TestNode> chunks = new ArrayList<>();
        long weight = 0;
        for (long k = 0; k < 5; k++) {
            TestNode c = chunk(k);
            policy.add(c);
            chunks.add(c);
            weight += MIB;
        }
        List<TestNode> hot = new ArrayList<>();
        for (long k = 0; k < 1_000; k++) { // 1 MiB of hot small keys, read twice
            TestNode n = new TestNode(1_000 + k, small);
            policy.add(n);
            hot.add(n);
            weight += small;
        }
        hot.forEach(policy::touch);
        hot.forEach(policy::touch);
        for (long k = 0; k < 50_000; k++) { // a one-pass scan of 50 MiB of cold small keys through 10 MiB
            policy.add(new TestNode(1_000_000 + k, small));
            weight += small;
            while (weight > CAPACITY) {
                weight -= policy.nextVictim().weight();
            }
        }
        assertThat(hot).allMatch(PolicyNode::isQueued);
        assertThat(chunks).allMatch(PolicyNode::isQueued);
    }

    @Test
    void onlyChunksAreOrderedOnTouch() {
        KvCachePolicy policy = new KvCachePolicy(CAPACITY, 100);
        assertThat(policy.ordersOnTouch(new TestNode(1, KvCachePolicy.LARGE_BYTES))).isTrue();
        assertThat(policy.ordersOnTouch(new TestNode(2, KvCachePolicy.LARGE_BYTES - 1))).isFalse();
        TestNode plain = new TestNode(3, 100);
        policy.add(plain);
        assertThat(plain.queue).as("a small value goes on probation").isEqualTo((byte) 1);
    }
}
