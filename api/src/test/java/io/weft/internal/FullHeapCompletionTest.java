package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.weft.ParkToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A task's first completion with a waiter, made with the heap full, still runs the waiter and
 * readies its token (WaiterStack's notes, "Linked when the class loads"). In a JVM of its own with
 * a small heap ({@link #main}): the stack and the waiter are made first, then the heap is filled
 * and held, then the completion runs, then the heap is freed and the outcome printed. Without the
 * linking when WaiterStack and ParkToken load, the completion's first swap (in interpreted code,
 * a VarHandle call site's first run allocates) throws OutOfMemoryError and the waiter never runs.
 */
class FullHeapCompletionTest {
    @Test
    void aCompletionsFirstWakeUpWithTheHeapFullStillReadiesTheWaitersToken() throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(
                        java.toString(),
                        "-Xmx32m",
                        "-Xint", // every call site runs interpreted, as a cold path does
                        "--add-opens",
                        "java.base/java.lang=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        FullHeapCompletionTest.class.getName())
                .redirectErrorStream(true)
                .start();
        String out;
        try (var in = child.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
        }
        child.waitFor(30, TimeUnit.SECONDS);
        assertEquals("token ready: true, failure: none", out);
    }

    /** A waiter stack whose task is done when the test says so. */
    private static final class Stack extends WaiterStack {
        volatile boolean done;

        @Override
        boolean isDone() {
            return done;
        }
    }

    /**
     * The child JVM: registers a parked await's wake-up on a stack, fills the heap, completes,
     * frees the heap, prints whether the token was readied and what the completion threw.
     *
     * @param args none
     */
    public static void main(String[] args) {
        Stack stack = new Stack();
        ParkToken token = ParkToken.create();
        stack.push(new WaiterStack.Wakeup(null, token));
        List<Object> hog = new ArrayList<>();
        fill(hog, 4096);
        fill(hog, 16);
        fill(hog, 0);
        Throwable failure = null;
        try {
            stack.done = true;
            stack.runWaiters();
        } catch (Throwable t) {
            failure = t;
        }
        hog.clear();
        hog = null;
        System.out.println("token ready: " + token.isReady() + ", failure: " + (failure == null ? "none" : failure));
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
