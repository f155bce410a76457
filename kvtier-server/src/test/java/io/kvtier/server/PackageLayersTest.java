package io.kvtier.server;

import io.kvtier.testkit.ModuleClasses;
import io.kvtier.testkit.PackageLayers;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The node's packages in their layer order, bottom-up (docs/architecture.md): a package imports only packages of
 * lower layers. The shared PackageCyclesTest only forbids cycles; this also fixes which way each import points.
 */
class PackageLayersTest {
    private static final String ROOT = "io.kvtier.server";

    @Test
    void packagesImportOnlyLowerLayers() {
        PackageLayers.rule(ROOT, List.of(
                List.of(ROOT + ".config", ROOT + ".fatal", ROOT + ".events"),
                List.of(ROOT + ".reply"),
                List.of(ROOT + ".value"),
                List.of(ROOT + ".script", ROOT + ".tls"),
                List.of(ROOT + ".metrics"),
                List.of(ROOT + ".command"),
                List.of(ROOT + ".net"),
                List.of(ROOT))).check(ModuleClasses.main());
    }
}
