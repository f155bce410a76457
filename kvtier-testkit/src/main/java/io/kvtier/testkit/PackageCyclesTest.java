package io.kvtier.testkit;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import org.junit.jupiter.api.Test;

/**
 * Fails when the packages of the module under test import each other in a cycle (a -> b -> a, or longer), so that
 * each module's packages stay a hierarchy that can be read, tested and split bottom-up. It runs in every module that
 * depends on kvtier-testkit with test scope: the parent pom's surefire configuration scans this jar for tests
 * ({@code dependenciesToScan}) and names the module's class directory ({@link ModuleClasses}). Each package is a
 * slice of its own, subpackages included: {@code io.kvtier.server} and {@code io.kvtier.server.net} are two.
 */
public class PackageCyclesTest {
    @Test
    void packagesAreFreeOfCycles() {
        slices().matching("io.kvtier.(**)").should().beFreeOfCycles().check(ModuleClasses.main());
    }
}
