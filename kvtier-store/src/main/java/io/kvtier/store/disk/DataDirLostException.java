package io.kvtier.store.disk;

import java.io.IOException;
import java.nio.file.Path;

/** The data directory was deleted or replaced under a running node: its writes would land in another's directory. */
public final class DataDirLostException extends IOException {
    public DataDirLostException(Path dir) {
        super("data directory " + dir.toAbsolutePath() + " was deleted or replaced while this node ran; restart "
                + "the node to write to disk again");
    }
}
