package io.weft.fiber;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A FiberIo program's first wake-up of a fiber from a fiber on a worker, made with the heap full,
 * still resumes the fiber (Worker's notes, "Failures": the constructor links pushLifo's call
 * sites). In a JVM of its own ({@link #main}): one worker; a task parks on a token; the root task
 * fills the heap, readies the token, frees the heap and awaits the parked task. Without the
 * linking, the JDK retries the wake-up's submission every 100 ms for as long as it throws
 * OutOfMemoryError, on the root's own thread, which holds the heap full: the child never ends.
 */
class FullHeapWakeUpTest {
    @Test
    void aFibersFirstWakeUpFromAWorkerWithTheHeapFullStillResumesIt() throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(
                        java.toString(),
                        "-Xmx48m",
                        "-Xint", // every call site runs interpreted, as a cold path does
                        "--add-opens",
                        "java.base/java.lang=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        FullHeapWakeUpTest.class.getName())
                .redirectErrorStream(true)
                .start();
        try {
            boolean ended = child.waitFor(40, TimeUnit.SECONDS);
            String out = ended ? new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip() : "";
            assertEquals("resumed: true, failure: none", ended ? out : "not ended after 40 s");
        } finally {
            child.destroyForcibly();
        }
    }

    /**
     * The child JVM; prints whether the parked task resumed and what the wake-up threw.
     *
     * @param args none
     */
    public static void main(String[] args) {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            String outcome = Io.with(io).call(() -> {
                AtomicReference<ParkToken> parkedOn = new AtomicReference<>();
                Future<Boolean> parked = Io.async(() -> {
                    ParkToken token = ParkToken.create();
                    parkedOn.set(token);
                    Io.current().suspendRaw(token);
                    return true;
                });
                while (parkedOn.get() == null) {
                    Io.yield(); // one worker: the task runs until it parks, then this task goes on
                }
                ParkToken token = parkedOn.get();
                Io self = Io.current();
                List<Object> hog = new ArrayList<>();
                fill(hog, 4096);
                fill(hog, 0);
                Throwable failure = null;
                try {
                    self.ready(token);
                } catch (Throwable t) {
                    failure = t;
                }
                hog.clear();
                hog = null;
                if (failure != null) {
                    failure.printStackTrace(System.out);
                }
                boolean resumed;
                try {
                    resumed = parked.await(Duration.ofSeconds(20));
                } catch (RuntimeException notResumed) { // TimedOut
                    resumed = false;
                }
                return "resumed: " + resumed + ", failure: " + (failure == null ? "none" : failure);
            });
            System.out.println(outcome);
        }
    }

    /** Adds arrays of {@code longs} elements until the heap has no room for one more. */
    private static void fill(List<Object> hog, int longs) {
        try {
            while (true) {
                hog.add(new long[longs]);
            }
        } catch (OutOfMemoryError full) {
            // full for arrays of this size
        }
    }
}
