package io.kvtier.testkit;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import io.kvtier.testkit.fixture.high.Top;
import io.kvtier.testkit.fixture.loose.Unplaced;
import io.kvtier.testkit.fixture.low.Base;
import io.kvtier.testkit.fixture.low.Upward;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link PackageLayers} on a fixture of two layers: imports downward pass, upward ones and unplaced packages fail. */
class PackageLayersTest {
    private static final String ROOT = "io.kvtier.testkit.fixture";
    private static final ArchRule RULE = PackageLayers.rule(ROOT,
            List.of(List.of(ROOT + ".low"), List.of(ROOT + ".high")));

    @Test
    void passesImportsOfLowerLayers() {
        assertThatCode(() -> RULE.check(new ClassFileImporter().importClasses(Base.class, Top.class)))
                .doesNotThrowAnyException();
    }

    @Test
    void failsAnImportOfAHigherLayer() {
        assertThatThrownBy(() -> RULE.check(new ClassFileImporter().importClasses(Base.class, Top.class,
                Upward.class))).isInstanceOf(AssertionError.class)
                .hasMessageContaining(ROOT + ".low (layer 0) imports " + ROOT + ".high (layer 1)")
                .hasMessageContaining(Upward.class.getName() + ".top");
    }

    @Test
    void failsAPackageInNoLayer() {
        assertThatThrownBy(() -> RULE.check(new ClassFileImporter().importClasses(Base.class, Unplaced.class)))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("package " + ROOT + ".loose of " + Unplaced.class.getName() + " is in no layer");
    }

    @Test
    void refusesAPackageInTwoLayers() {
        assertThatThrownBy(() -> PackageLayers.rule(ROOT, List.of(List.of(ROOT + ".low"), List.of(ROOT + ".low"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessage(ROOT + ".low is in two layers");
    }
}
