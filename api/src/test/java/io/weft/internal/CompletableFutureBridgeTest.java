package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Future.State;
import io.weft.internal.Task.CancelOutcome;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** Future.from(CompletionStage) and Future.toCompletableFuture(). */
class CompletableFutureBridgeTest {

    // ---------------------------------------------------------------- from

    @Test
    void fromMirrorsTheStagesValueOnceItCompletes() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Future<String> future = Future.from(stage);
        assertEquals(State.PENDING, future.state());

        stage.complete("v");
        assertEquals(State.SUCCESS, future.state());
        assertEquals("v", future.resultNow());
    }

    @Test
    void fromAnAlreadyCompletedStageIsDoneAtOnce() {
        assertEquals("v", Future.from(CompletableFuture.completedFuture("v")).resultNow());
    }

    @Test
    void fromMirrorsTheStagesFailureAsTheSameInstance() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Future<String> future = Future.from(stage);
        IllegalStateException failure = new IllegalStateException("bad");

        stage.completeExceptionally(failure);
        assertEquals(State.FAILED, future.state());
        assertSame(failure, future.exceptionNow());
    }

    @Test
    void fromUnwrapsACompletionException() {
        IllegalStateException failure = new IllegalStateException("bad");
        CompletableFuture<String> wrapped = new CompletableFuture<>();
        wrapped.completeExceptionally(new CompletionException(failure));
        // A dependent stage reports its upstream failure wrapped in CompletionException too.
        CompletableFuture<String> upstream = new CompletableFuture<>();
        CompletableFuture<String> dependent = upstream.thenApply(s -> s + "!");
        upstream.completeExceptionally(failure);

        assertSame(failure, Future.from(wrapped).exceptionNow());
        assertSame(failure, Future.from(dependent).exceptionNow());
    }

    @Test
    void fromMakesACancelledStageCancelled() {
        CompletableFuture<String> cancelled = new CompletableFuture<>();
        Future<String> future = Future.from(cancelled);
        CompletableFuture<String> failedWithCancellation = new CompletableFuture<>();
        failedWithCancellation.completeExceptionally(new CancellationException("gone"));

        cancelled.cancel(true);
        assertEquals(State.CANCELLED, future.state());
        assertThrows(Cancelled.class, future::await);
        assertEquals(State.CANCELLED, Future.from(failedWithCancellation).state());
    }

    @Test
    void cancellingTheWeftFutureCompletesItAtOnceAndLeavesTheStageAlone() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> future = Task.of(Future.from(stage), "future");

        assertEquals(CancelOutcome.CANCELLED_BEFORE_START, future.requestCancel());
        assertEquals(State.CANCELLED, future.state());
        assertFalse(stage.isDone(), "the stage is not cancelled");

        assertTrue(stage.complete("late"));
        assertEquals(State.CANCELLED, future.state(), "a late value does not undo the cancel");
    }

    // ---------------------------------------------------------------- toCompletableFuture

    @Test
    void toCompletableFutureMirrorsALaterValue() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        CompletableFuture<String> mirror = Future.from(stage).toCompletableFuture();
        assertFalse(mirror.isDone());

        stage.complete("v");
        assertEquals("v", mirror.getNow("not done"));
    }

    @Test
    void toCompletableFutureMirrorsAnEarlierValue() {
        assertEquals("v", Future.completed("v").toCompletableFuture().getNow("not done"));
    }

    @Test
    void toCompletableFutureMirrorsAFailureAsTheSameInstance() {
        IllegalStateException failure = new IllegalStateException("bad");
        CompletableFuture<String> stage = new CompletableFuture<>();
        CompletableFuture<String> mirror = Future.from(stage).toCompletableFuture();
        stage.completeExceptionally(failure);

        ExecutionException e = assertThrows(ExecutionException.class, mirror::get);
        assertSame(failure, e.getCause());
        assertSame(
                failure,
                assertThrows(
                                ExecutionException.class,
                                Future.<String>failed(failure).toCompletableFuture()::get)
                        .getCause());
    }

    @Test
    void toCompletableFutureMirrorsACancellation() {
        DeferredIo io = new DeferredIo();
        Task<String> task = io.async(() -> "never");
        CompletableFuture<String> mirror = task.toCompletableFuture();

        task.cancel();
        assertTrue(mirror.isCancelled());
        assertTrue(Future.failed(new Cancelled("c")).toCompletableFuture().isCancelled());
    }

    @Test
    void cancellingTheCompletableFutureCancelsTheTask() {
        DeferredIo io = new DeferredIo();
        Task<String> task = io.async(() -> "never");
        CompletableFuture<String> mirror = task.toCompletableFuture();

        assertTrue(mirror.cancel(false));
        assertEquals(State.CANCELLED, task.state());
        io.runAll();
        assertEquals(State.CANCELLED, task.state(), "the cancelled task never runs its body");
    }

    @Test
    void completingTheCompletableFutureDoesNotTouchTheTask() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Future<String> future = Future.from(stage);
        CompletableFuture<String> mirror = future.toCompletableFuture();

        mirror.complete("from outside");
        assertEquals(State.PENDING, future.state());
        stage.complete("v");
        assertEquals("v", future.resultNow());
    }
}
