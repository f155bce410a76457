package io.kvtier.testkit;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A layer order for the packages under one root package: a package may import only packages of lower layers, never
 * one of its own layer or above. Stricter than no cycles: it fixes which way each dependency points, so a new import
 * that goes upward fails even before it closes a cycle. Every package under the root must be in a layer, so that a new
 * package is placed deliberately.
 */
public final class PackageLayers {
    private PackageLayers() {
    }

    /**
     * The rule for the packages under {@code root} (itself included): {@code bottomUp.get(0)} is the lowest layer,
     * each layer a list of full package names.
     */
    public static ArchRule rule(String root, List<List<String>> bottomUp) {
        Map<String, Integer> layerOf = new HashMap<>();
        for (int i = 0; i < bottomUp.size(); i++) {
            for (String pkg : bottomUp.get(i)) {
                if (layerOf.put(pkg, i) != null) {
                    throw new IllegalArgumentException(pkg + " is in two layers");
                }
            }
        }
        return classes().that().resideInAPackage(root + "..")
                .should(importOnlyLowerLayers(root, layerOf))
                .because("the packages under " + root + " are layered bottom-up as " + bottomUp);
    }

    private static ArchCondition<JavaClass> importOnlyLowerLayers(String root, Map<String, Integer> layerOf) {
        return new ArchCondition<>("import only packages of lower layers") {
            @Override
            public void check(JavaClass c, ConditionEvents events) {
                String from = c.getPackageName();
                Integer fromLayer = layerOf.get(from);
                if (fromLayer == null) {
                    events.add(SimpleConditionEvent.violated(c, "package " + from + " of " + c.getName()
                            + " is in no layer: place it in the layer order"));
                    return;
                }
                for (Dependency d : c.getDirectDependenciesFromSelf()) {
                    String to = d.getTargetClass().getBaseComponentType().getPackageName();
                    Integer toLayer = layerOf.get(to);
                    boolean under = to.equals(root) || to.startsWith(root + ".");
                    if (under && !to.equals(from) && toLayer != null && toLayer >= fromLayer) {
                        events.add(SimpleConditionEvent.violated(d, from + " (layer " + fromLayer + ") imports " + to
                                + " (layer " + toLayer + "): " + d.getDescription()));
                    }
                }
            }
        };
    }
}
