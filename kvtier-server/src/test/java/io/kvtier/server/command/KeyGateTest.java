package io.kvtier.server.command;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class KeyGateTest {
    private static byte[] key(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int[] stripes(String... keys) {
        byte[][] k = new byte[keys.length][];
        for (int i = 0; i < keys.length; i++) {
            k[i] = key(keys[i]);
        }
        return KeyGate.stripesOf(k);
    }

    @Test
    void commandsOnTheSameKeyRunTogether() {
        KeyGate gate = new KeyGate();
        int[] s = stripes("k");
        assertThat(gate.tryShared(s)).isNull();
        assertThat(gate.tryShared(s)).isNull();
        gate.leaveShared(s);
        gate.leaveShared(s);
        assertThat(gate.exclusive(new byte[][] {key("k")})).isCompleted();
    }

    @Test
    void anExclusiveHolderWaitsForRunningCommandsAndHoldsOffNewOnes() {
        KeyGate gate = new KeyGate();
        int[] s = stripes("k");
        assertThat(gate.tryShared(s)).isNull();
        CompletableFuture<Runnable> tx = gate.exclusive(new byte[][] {key("k")});
        assertThat(tx).as("a command on k is running").isNotDone();
        CompletableFuture<Void> blocked = gate.tryShared(s);
        assertThat(blocked).as("a new command queues behind the waiting transaction").isNotNull().isNotDone();
        gate.leaveShared(s);
        assertThat(tx).isCompleted();
        assertThat(blocked).as("still held by the transaction").isNotDone();
        assertThat(gate.tryShared(stripes("other-key"))).as("other keys are not held").isNull();
        tx.join().run();
        assertThat(blocked).isCompleted();
        assertThat(gate.tryShared(s)).isNull();
    }

    @Test
    void aCommandBlockedOnOneOfItsKeysHoldsNoneOfThemWhileItWaits() {
        KeyGate gate = new KeyGate();
        byte[] a = key("a");
        byte[] b = key("b");
        CompletableFuture<Runnable> txOnB = gate.exclusive(new byte[][] {b});
        int[] both = KeyGate.stripesOf(new byte[][] {a, b});
        assertThat(gate.tryShared(both)).isNotNull();
        assertThat(gate.exclusive(new byte[][] {a})).as("a is free: the blocked command gave it back").isCompleted();
        txOnB.join().run();
    }

    @Test
    void enterSharedCompletesOnTheGivenExecutorOnceTheKeyIsFree() throws Exception {
        KeyGate gate = new KeyGate();
        ExecutorService loop = Executors.newSingleThreadExecutor();
        try {
            Runnable unlock = gate.exclusive(new byte[][] {key("k")}).join();
            Thread[] ranOn = new Thread[1];
            CompletableFuture<Void> entered = gate.enterShared(stripes("k"), loop)
                    .thenRun(() -> ranOn[0] = Thread.currentThread());
            Thread.sleep(20);
            assertThat(entered).isNotDone();
            unlock.run();
            entered.get(5, TimeUnit.SECONDS);
            assertThat(ranOn[0].getName()).isNotEqualTo(Thread.currentThread().getName());
            gate.leaveShared(stripes("k"));
        } finally {
            loop.shutdownNow();
        }
    }

    /**
     * Many threads run transactions over overlapping key sets named in different orders, interleaved with commands:
     * every one completes (no deadlock) and no two transactions ever hold a key at once.
     */
    @Test
    void overlappingHoldersNeverDeadlockOrOverlap() throws Exception {
        KeyGate gate = new KeyGate();
        String[] names = {"a", "b", "c", "d", "e"};
        AtomicInteger[] holders = new AtomicInteger[names.length];
        for (int i = 0; i < holders.length; i++) {
            holders[i] = new AtomicInteger();
        }
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        try {
            for (int t = 0; t < 2_000; t++) {
                int first = t % names.length;
                int second = (t * 7 + 3) % names.length;
                boolean command = t % 3 == 0;
                all.add(CompletableFuture.runAsync(() -> { }, pool).thenCompose(v -> {
                    if (command) {
                        return gate.enterShared(stripes(names[first]), pool)
                                .thenRun(() -> {
                                    if (holders[first].get() != 0) {
                                        overlaps.incrementAndGet();
                                    }
                                    gate.leaveShared(stripes(names[first]));
                                });
                    }
                    return gate.exclusive(new byte[][] {key(names[second]), key(names[first])})
                            .thenAcceptAsync(unlock -> {
                                int[] held = first == second ? new int[] {first} : new int[] {first, second};
                                for (int k : held) {
                                    if (holders[k].incrementAndGet() != 1) {
                                        overlaps.incrementAndGet();
                                    }
                                }
                                Thread.onSpinWait();
                                for (int k : held) {
                                    holders[k].decrementAndGet();
                                }
                                unlock.run();
                            }, pool);
                }));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        assertThat(overlaps).hasValue(0);
    }
}
