package io.kvtier.testkit;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class that leaked Netty buffers: after the class, collects garbage until Netty's paranoid leak detector
 * has seen every unreleased buffer, and fails with the leaks' access records.
 */
public final class NettyLeakCheck implements BeforeAllCallback, AfterAllCallback {
    private static final int GC_ROUNDS = 4;

    @Override
    public void beforeAll(ExtensionContext context) {
        ByteBufAllocator.DEFAULT.buffer(1).release();
        if (!RecordingLeakDetector.isInstalled() || ResourceLeakDetector.getLevel() != ResourceLeakDetector.Level.PARANOID) {
            throw new IllegalStateException("leak detection is off: run with -Dio.netty.leakDetection.level=paranoid"
                    + " -Dio.netty.customResourceLeakDetector=" + RecordingLeakDetector.class.getName()
                    + " (the module's pom.xml passes both to surefire)");
        }
        RecordingLeakDetector.drain();
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        List<String> leaks = collectLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " Netty buffer leak(s) in " + context.getDisplayName() + ":\n"
                    + String.join("\n\n", leaks));
        }
    }

    /** Collects garbage and lets the detector report what was collected unreleased; returns and forgets the leaks. */
    public static List<String> collectLeaks() throws InterruptedException {
        for (int round = 0; round < GC_ROUNDS; round++) {
            System.gc();
            Thread.sleep(20);
            // At the paranoid level every tracked allocation first reports the leaks the GC has found so far.
            ByteBufAllocator.DEFAULT.buffer(1).release();
        }
        return RecordingLeakDetector.drain();
    }
}
