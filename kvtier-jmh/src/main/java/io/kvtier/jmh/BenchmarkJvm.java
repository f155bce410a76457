package io.kvtier.jmh;

/**
 * The JVM flags every benchmark fork gets (through {@code @Fork(jvmArgsAppend = ...)}), so that a run needs none on
 * its command line: the {@code kvtier} launcher's flags that change which code paths run, so the code is measured as
 * it runs in the server. The launching JVM only runs JMH and needs none of them (the jar's manifest enables native
 * access for in-process {@code -f 0} runs).
 */
final class BenchmarkJvm {
    /**
     * Direct buffers (the decoder's input, the store's disk write buffer) and memory-tier slabs where they come from
     * {@code Arena.allocate} all count against this limit; left unset it would be the heap size, which a fork picks
     * from the machine's memory. 1 GiB is far above what any benchmark here holds (the launcher's 1t means "no limit
     * but --memory").
     */
    static final String DIRECT_MEMORY = "-XX:MaxDirectMemorySize=1g";
    /** The memory tier maps its slabs with mmap through the FFM linker, a restricted method. */
    static final String NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED";
    /**
     * Without it Netty 4.2 on JDK 25 turns its use of sun.misc.Unsafe off ({@code PlatformDependent.hasUnsafe()} is
     * false), so its buffers would take slower paths than in the server.
     */
    static final String UNSAFE_MEMORY_ACCESS = "--sun-misc-unsafe-memory-access=allow";
    /**
     * The launcher sets it; without {@code --add-opens java.base/java.nio} it changes nothing on JDK 25 (Netty still
     * finds no cleaner-less DirectByteBuffer constructor), but the flag set stays the launcher's.
     */
    static final String NETTY_REFLECTION = "-Dio.netty.tryReflectionSetAccessible=true";

    private BenchmarkJvm() {
    }
}
