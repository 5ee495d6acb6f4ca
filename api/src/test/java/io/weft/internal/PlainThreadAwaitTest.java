package io.weft.internal;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** A plain thread's untimed await: it looks for a short while, then blocks until the task ends. */
class PlainThreadAwaitTest {

    @Test
    void aPlainThreadAwaitingATaskThatDoesNotEndBlocksAfterItsSpinAndWakesWhenItEnds() throws Exception {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> task = Task.fromStage(stage);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().start(() -> {
            try {
                outcome.set(task.await());
            } catch (RuntimeException e) {
                outcome.set(e);
            }
        });
        // Blocked, not spinning: a waiter that kept looking would stay RUNNABLE for good
        await().atMost(Duration.ofSeconds(10))
                .until(() -> waiter.getState() == Thread.State.WAITING && LockSupport.getBlocker(waiter) != null);
        assertFalse(task.isDone());

        stage.complete("done");
        waiter.join(Duration.ofSeconds(10));
        assertFalse(waiter.isAlive());
        assertEquals("done", outcome.get());
    }

    @Test
    void aPlainThreadAwaitingATaskThatEndsWhileItLooksGetsTheValue() throws Exception {
        CompletableFuture<Integer> stage = new CompletableFuture<>();
        Task<Integer> task = Task.fromStage(stage);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().start(() -> outcome.set(task.await()));
        stage.complete(42); // at once: most likely while the waiter still looks
        waiter.join(Duration.ofSeconds(10));
        assertFalse(waiter.isAlive());
        assertEquals(42, outcome.get());
    }

    @Test
    void anInterruptedPlainThreadThrowsCancelledWithItsFlagSet() throws Exception {
        Task<Integer> task = Task.fromStage(new CompletableFuture<>()); // never ends
        AtomicReference<Object> outcome = new AtomicReference<>();
        AtomicReference<Boolean> flag = new AtomicReference<>();
        Thread waiter = Thread.ofPlatform().start(() -> {
            Thread.currentThread().interrupt();
            try {
                outcome.set(task.await());
            } catch (Cancelled e) {
                outcome.set(e);
            }
            flag.set(Thread.currentThread().isInterrupted());
        });
        waiter.join(Duration.ofSeconds(10));
        assertFalse(waiter.isAlive());
        assertInstanceOf(Cancelled.class, outcome.get());
        assertTrue(flag.get());
        assertFalse(task.isDone());
    }
}
