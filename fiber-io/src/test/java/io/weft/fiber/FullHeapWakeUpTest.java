package io.weft.fiber;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
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
        // -Xint: every call site runs interpreted, as a cold path does
        ChildJvm.Result result = ChildJvm.run(
                List.of("-Xmx48m", "-Xint", "--add-opens", "java.base/java.lang=ALL-UNNAMED"),
                40,
                FullHeapWakeUpTest.class);
        assertTrue(
                result.output().lines().anyMatch("resumed: true, failure: none"::equals),
                "exit " + result.exitCode() + " (-1: not ended after 40 s), output:\n" + result.output());
    }

    /**
     * The child JVM; prints whether the parked task resumed and what the wake-up threw.
     *
     * @param args none
     */
    public static void main(String[] args) {
        // No stall watch: its looks allocate, and would fill or free the heap under the test
        try (FiberIo io =
                FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build()) {
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
                Object[] hog = fill();
                Throwable failure = null;
                try {
                    self.ready(token);
                } catch (Throwable t) {
                    failure = t;
                }
                hog[0] = null;
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

    /**
     * Fills the heap with a chain of arrays, bigger ones first, until not even an empty one fits;
     * returns the chain's head (dropping its first element frees it all).
     */
    static Object[] fill() {
        Object[] head = new Object[1];
        for (int words = 4096; words >= 0; words = words == 0 ? -1 : words / 8) {
            try {
                while (true) {
                    Object[] link = new Object[2 + words];
                    link[0] = head[0];
                    head[0] = link;
                }
            } catch (OutOfMemoryError full) {
                // full for arrays of this size: try smaller ones
            }
        }
        return head;
    }
}
