package io.weft.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §1: combinators never name an implementation. Reads the module's compiled main classes
 * and fails if any of them refers to a class of {@code io.weft.blocking} or {@code io.weft.fiber}
 * (class references are stored as internal names, {@code io/weft/blocking/...}, in the constant
 * pool), or to the api's unexported {@code io.weft.internal} — with two exceptions, neither of
 * which names an implementation: {@code SideThreads}, the one way for a producer to get a thread
 * of its own that an inline Io with a virtual clock keeps in turns (an Io that registers nothing
 * gets a plain virtual thread); and {@code CancelScope}, the scope-limited cancellation of a
 * task or plain thread that {@code Scope} stops its owner with.
 */
class ArchitectureTest {

    private static final List<String> FORBIDDEN = List.of("io/weft/blocking/", "io/weft/fiber/", "io/weft/internal/");
    /** The internal classes combinators may use. */
    private static final List<String> ALLOWED = List.of("io/weft/internal/SideThreads", "io/weft/internal/CancelScope");

    @Test
    void combinatorsDependOnTheApiOnly() throws IOException {
        Path classes = Path.of("target", "classes");
        assertTrue(Files.isDirectory(classes), "run from the combinators module: " + classes.toAbsolutePath());
        List<String> offenders;
        try (Stream<Path> files = Files.walk(classes)) {
            offenders = files.filter(p -> p.toString().endsWith(".class"))
                    .filter(p -> !p.getFileName().toString().equals("module-info.class"))
                    .flatMap(ArchitectureTest::forbiddenReferences)
                    .toList();
        }
        assertEquals(List.of(), offenders);
    }

    @Test
    void theCheckSeesAReferenceWhenThereIsOne() {
        byte[] fake = "xx io/weft/fiber/FiberIo xx".getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(
                List.of("fake.class -> io/weft/fiber/"),
                referencesIn("fake.class", fake).toList());
    }

    private static Stream<String> forbiddenReferences(Path classFile) {
        try {
            return referencesIn(classFile.getFileName().toString(), Files.readAllBytes(classFile));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void theAllowedInternalClassesAreAllowedAndNoOther() {
        byte[] allowed = "xx io/weft/internal/SideThreads xx io/weft/internal/SideThreads$Registry xx"
                .getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(List.of(), referencesIn("ok.class", allowed).toList());
        byte[] scope = "xx io/weft/internal/CancelScope xx".getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(List.of(), referencesIn("scope.class", scope).toList());
        byte[] both =
                "xx io/weft/internal/SideThreads xx io/weft/internal/Task xx".getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(
                List.of("both.class -> io/weft/internal/"),
                referencesIn("both.class", both).toList());
    }

    private static Stream<String> referencesIn(String name, byte[] bytes) {
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        for (String allowed : ALLOWED) {
            text = text.replace(allowed, "");
        }
        return FORBIDDEN.stream().filter(text::contains).map(forbidden -> name + " -> " + forbidden);
    }
}
