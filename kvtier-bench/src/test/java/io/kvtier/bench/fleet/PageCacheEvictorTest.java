package io.kvtier.bench.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file read into the page cache is out of it after one pass: fincore (util-linux) counts its cached pages. */
class PageCacheEvictorTest {
    @TempDir
    Path dir;

    private static long cachedPages(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("fincore", "--bytes", "--noheadings", "--output", "PAGES", file.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return Long.parseLong(out);
    }

    private static boolean hasFincore() {
        try {
            return new ProcessBuilder("fincore", "--version").start().waitFor(10, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    @Test
    void aPassDropsTheFilesUnderTheDirectoryFromThePageCache() throws Exception {
        assumeTrue(PageCacheEvictor.available(), "Linux only");
        assumeTrue(hasFincore(), "fincore (util-linux) is not installed");
        Path file = Files.createDirectories(dir.resolve("n1/regions")).resolve("region-1");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(8 << 20);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true); // clean pages: dropped at once
        }
        Files.readAllBytes(file);
        long before = cachedPages(file);
        assumeTrue(before > 0, "this file system keeps no pages in the page cache (tmpfs?)");

        PageCacheEvictor.evictOnce(dir);

        assertThat(cachedPages(file)).isLessThan(before / 4);
    }

    @Test
    void aMissingDirectoryIsNotAnError() {
        PageCacheEvictor.evictOnce(dir.resolve("not-yet"));
        try (PageCacheEvictor e = PageCacheEvictor.start(dir.resolve("not-yet"), java.time.Duration.ofMillis(10))) {
            assertThat(e).isNotNull();
        }
    }
}
