package io.kvtier.bench.compare;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LauncherTest {
    @TempDir
    Path repo;

    private Path executable(Path file) throws Exception {
        Files.writeString(file, "#!/bin/sh\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return file;
    }

    @Test
    void findsTheLauncherAtTheRepoRootAboveTheJar() throws Exception {
        Path launcher = executable(repo.resolve("kvtier"));
        Path jar = Files.createDirectories(repo.resolve("kvtier-cli/target")).resolve("kvtier.jar");
        Files.writeString(jar, "");

        assertThat(Launcher.findAbove(jar)).contains(launcher);
    }

    @Test
    void skipsDirectoriesAndFilesThatAreNotExecutable() throws Exception {
        Path nested = Files.createDirectories(repo.resolve("a/b/kvtier"));
        Files.writeString(repo.resolve("a/kvtier"), "not executable");

        // Nothing above the temp dir is expected to hold a kvtier launcher.
        assertThat(Launcher.findAbove(nested)).isEmpty();
    }

    @Test
    void prefersTheNearestLauncher() throws Exception {
        executable(repo.resolve("kvtier"));
        Path inner = executable(Files.createDirectories(repo.resolve("inner")).resolve("kvtier"));

        assertThat(Launcher.findAbove(repo.resolve("inner/target/x.jar"))).contains(inner);
    }
}
