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
        assertThat(gate.enterShared(s)).isNull();
        assertThat(gate.enterShared(s)).isNull();
        gate.leaveShared(s);
        gate.leaveShared(s);
        assertThat(gate.exclusive(new byte[][] {key("k")})).isCompleted();
    }

    @Test
    void anExclusiveHolderWaitsForRunningCommandsAndHoldsOffNewOnes() {
        KeyGate gate = new KeyGate();
        int[] s = stripes("k");
        assertThat(gate.enterShared(s)).isNull();
        CompletableFuture<Runnable> tx = gate.exclusive(new byte[][] {key("k")});
        assertThat(tx).as("a command on k is running").isNotDone();
        CompletableFuture<Void> blocked = gate.enterShared(s);
        assertThat(blocked).as("a new command queues behind the waiting transaction").isNotNull().isNotDone();
        gate.leaveShared(s);
        assertThat(tx).isCompleted();
        assertThat(blocked).as("still held by the transaction").isNotDone();
        assertThat(gate.enterShared(stripes("other-key"))).as("other keys are not held").isNull();
        tx.join().run();
        assertThat(blocked).as("granted when the transaction ends").isCompleted();
        gate.leaveShared(s);
        gate.leaveShared(stripes("other-key"));
        assertThat(gate.exclusive(new byte[][] {key("k")})).isCompleted();
    }

    /**
     * Arrival order decides: the commands queued behind one transaction all enter together before the transaction
     * queued after them, so neither transactions nor commands starve.
     */
    @Test
    void waitersAreGrantedInArrivalOrder() {
        KeyGate gate = new KeyGate();
        int[] s = stripes("k");
        byte[][] k = {key("k")};
        Runnable first = gate.exclusive(k).join();
        CompletableFuture<Void> reader1 = gate.enterShared(s);
        CompletableFuture<Void> reader2 = gate.enterShared(s);
        CompletableFuture<Runnable> second = gate.exclusive(k);
        CompletableFuture<Void> reader3 = gate.enterShared(s);
        first.run();
        assertThat(reader1).isCompleted();
        assertThat(reader2).isCompleted();
        assertThat(second).as("behind the two commands that came first").isNotDone();
        assertThat(reader3).as("behind the transaction that came first").isNotDone();
        gate.leaveShared(s);
        gate.leaveShared(s);
        assertThat(second).isCompleted();
        assertThat(reader3).isNotDone();
        second.join().run();
        assertThat(reader3).isCompleted();
        gate.leaveShared(s);
    }

    /**
     * Many threads run transactions over overlapping key sets named in different orders, interleaved with commands on
     * one and two keys: every one completes (no deadlock) and no command or other transaction ever runs on a key a
     * transaction holds.
     */
    @Test
    void overlappingHoldersNeverDeadlockOrOverlap() throws Exception {
        KeyGate gate = new KeyGate();
        String[] names = {"a", "b", "c", "d", "e"};
        AtomicInteger[] exclusive = new AtomicInteger[names.length];
        AtomicInteger[] shared = new AtomicInteger[names.length];
        for (int i = 0; i < names.length; i++) {
            exclusive[i] = new AtomicInteger();
            shared[i] = new AtomicInteger();
        }
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<CompletableFuture<Void>> all = new ArrayList<>();
        try {
            for (int t = 0; t < 3_000; t++) {
                int first = t % names.length;
                int second = (t * 7 + 3) % names.length;
                int[] held = first == second ? new int[] {first} : new int[] {first, second};
                boolean command = t % 3 != 0;
                all.add(CompletableFuture.runAsync(() -> { }, pool).thenCompose(v -> {
                    if (command) {
                        int[] s = stripes(held.length == 1 ? new String[] {names[first]}
                                : new String[] {names[first], names[second]});
                        CompletableFuture<Void> entered = gate.enterShared(s);
                        return (entered == null ? CompletableFuture.<Void>completedFuture(null) : entered)
                                .thenRunAsync(() -> {
                                    for (int k : held) {
                                        shared[k].incrementAndGet();
                                        if (exclusive[k].get() != 0) {
                                            overlaps.incrementAndGet();
                                        }
                                    }
                                    Thread.onSpinWait();
                                    for (int k : held) {
                                        shared[k].decrementAndGet();
                                    }
                                    gate.leaveShared(s);
                                }, pool);
                    }
                    return gate.exclusive(new byte[][] {key(names[second]), key(names[first])})
                            .thenAcceptAsync(unlock -> {
                                for (int k : held) {
                                    if (exclusive[k].incrementAndGet() != 1 || shared[k].get() != 0) {
                                        overlaps.incrementAndGet();
                                    }
                                }
                                Thread.onSpinWait();
                                for (int k : held) {
                                    exclusive[k].decrementAndGet();
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
