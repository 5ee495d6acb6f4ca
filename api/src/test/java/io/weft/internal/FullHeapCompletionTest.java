package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.ParkToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A task's first completion with a waiter, made with the heap full, still runs the waiter and
 * readies its token (WaiterStack's notes, "Linked when the class loads"). In a JVM of its own with
 * a small heap ({@link #main}): the stack and the waiter are made first, then the heap is filled
 * and held, then the completion runs, then the heap is freed and the outcome printed. Without the
 * linking when Task and ParkToken load, the completion's first swap (in interpreted code,
 * a VarHandle call site's first run allocates) throws OutOfMemoryError and the waiter never runs.
 */
class FullHeapCompletionTest {
    @Test
    void aCompletionsFirstWakeUpWithTheHeapFullStillReadiesTheWaitersToken() throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = Files.createTempFile("weft-child", ".log");
        try {
            Process child = new ProcessBuilder(
                            java.toString(),
                            "-Xmx32m",
                            "-Xint", // every call site runs interpreted, as a cold path does
                            "-cp",
                            System.getProperty("java.class.path"),
                            FullHeapCompletionTest.class.getName())
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            boolean ended = child.waitFor(40, TimeUnit.SECONDS);
            if (!ended) {
                child.destroyForcibly().waitFor();
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertTrue(
                    out.lines().anyMatch("token ready: true, failure: none"::equals),
                    (ended ? "exit " + child.exitValue() : "not ended after 40 s") + ", output:\n" + out);
        } finally {
            Files.deleteIfExists(log);
        }
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
        Task.succeeded(null); // loads Task, as any program that makes a task does
        Stack stack = new Stack();
        ParkToken token = ParkToken.create();
        stack.push(new WaiterStack.Wakeup(null, token));
        Object[] hog = fill();
        Throwable failure = null;
        try {
            stack.done = true;
            stack.runWaiters();
        } catch (Throwable t) {
            failure = t;
        }
        hog[0] = null;
        System.out.println("token ready: " + token.isReady() + ", failure: " + (failure == null ? "none" : failure));
    }

    /**
     * Fills the heap with a chain of arrays, bigger ones first, until not even an empty one fits;
     * returns the chain's head (dropping its first element frees it all).
     */
    private static Object[] fill() {
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
