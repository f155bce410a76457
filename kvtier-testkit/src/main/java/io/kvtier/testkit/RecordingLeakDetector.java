package io.kvtier.testkit;

import io.netty.util.ResourceLeakDetector;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Netty's leak detector, recording every leak instead of logging it, so that {@link NettyLeakCheck} can fail the test
 * class with the leak's access records. Installed
 * by the {@code io.netty.customResourceLeakDetector} system property that the pom.xml of each module with Netty buffer tests gives surefire.
 *
 * @param <T> the tracked resource type
 */
public final class RecordingLeakDetector<T> extends ResourceLeakDetector<T> {
    private static final Queue<String> LEAKS = new ConcurrentLinkedQueue<>();
    private static volatile boolean installed;

    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        installed = true;
    }

    /** The signature Netty's factory looks up first; without it, it logs an error before using the one above. */
    public RecordingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        this(resourceType, samplingInterval);
    }

    public static boolean isInstalled() {
        return installed;
    }

    /** Returns and forgets the leaks reported so far. */
    public static List<String> drain() {
        List<String> leaks = new ArrayList<>();
        for (String leak; (leak = LEAKS.poll()) != null; ) {
            leaks.add(leak);
        }
        return leaks;
    }

    @Override
    protected boolean needReport() {
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add(resourceType + " leaked; its last accesses:" + records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add(resourceType + " leaked (no access records)");
    }
}
