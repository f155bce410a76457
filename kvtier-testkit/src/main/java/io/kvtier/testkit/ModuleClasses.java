package io.kvtier.testkit;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The main classes of the module whose tests are running: its class directory, which the parent pom's surefire
 * configuration passes in the {@value #PROPERTY} system property. Test classes are not part of it: the rules are about
 * what ships.
 */
public final class ModuleClasses {
    /** The system property that names the module's class directory ({@code ${project.build.outputDirectory}}). */
    public static final String PROPERTY = "kvtier.test.classes";

    private ModuleClasses() {
    }

    /** Reads the module's class files. */
    public static JavaClasses main() {
        String dir = System.getProperty(PROPERTY);
        if (dir == null || !Files.isDirectory(Path.of(dir))) {
            throw new IllegalStateException("system property " + PROPERTY + " must name the module's class directory "
                    + "(set by the parent pom's surefire configuration); it is " + dir);
        }
        return new ClassFileImporter().importPath(Path.of(dir));
    }
}
