package io.kvtier.bench.compare;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Finds kvtier's launcher script: an executable regular file named {@code kvtier} in the directory of the running
 * jar or any directory above it ({@code <repo>/kvtier-cli/target/kvtier.jar} gives {@code <repo>/kvtier}).
 * Stateless.
 */
public final class Launcher {
    public static final String NAME = "kvtier";

    private Launcher() {
    }

    /** The launcher at or above {@code start}, nearest first. */
    public static Optional<Path> findAbove(Path start) {
        for (Path dir = start.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve(NAME);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** Where this class was loaded from: the jar, or the classes directory when run from a build tree. */
    public static Optional<Path> runningCode() {
        try {
            var source = Launcher.class.getProtectionDomain().getCodeSource();
            return source == null ? Optional.empty() : Optional.of(Path.of(source.getLocation().toURI()));
        } catch (URISyntaxException | SecurityException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The launcher above the running code; throws, naming the flag to give, when there is none. */
    public static Path discover() {
        return runningCode().flatMap(Launcher::findAbove).orElseThrow(() -> new IllegalArgumentException(
                "no executable '" + NAME + "' launcher found above " + runningCode().map(Path::toString)
                        .orElse("the running code") + "; give its path with --kvtier-launcher PATH"));
    }
}
