package io.weft.internal;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/** The bridge between Weft's tasks and the JDK's {@link CompletionStage}s, both ways. */
final class StageBridge {
    private StageBridge() {}

    /** Completes the bodiless {@code task} with {@code stage}'s outcome when it has one. */
    static <T> void completeFrom(CompletionStage<? extends T> stage, Task<T> task) {
        stage.whenComplete((value, failure) -> {
            if (failure == null) {
                task.completeFromOutside(value, null);
            } else {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause()
                        : failure;
                task.completeFromOutside(null, cause);
            }
        });
    }

    /**
     * Returns a CompletableFuture that mirrors {@code task}: completed with its outcome (a
     * cancellation as a cancelled CompletableFuture), and cancelling {@code task} if cancelled.
     */
    static <T> CompletableFuture<T> mirror(Task<T> task) {
        CompletableFuture<T> mirror = new CompletableFuture<>();
        Runnable copy = () -> {
            switch (task.state()) {
                case SUCCESS -> mirror.complete(task.resultNow());
                case FAILED -> {
                    // observed only if the mirror carries it: a mirror the user completed first
                    // (complete, completeOnTimeout, orTimeout) drops it, and a scope must still report it
                    if (mirror.completeExceptionally(task.peekFailure())) {
                        task.markObserved();
                    }
                }
                default -> mirror.cancel(false);
            }
        };
        if (task.addWaiter(copy) == null) {
            copy.run();
        }
        mirror.whenComplete((value, failure) -> {
            if (mirror.isCancelled()) {
                task.cancel();
            }
        });
        return mirror;
    }

    /** Whether {@code failure} completes a task as cancelled rather than failed. */
    static boolean isCancellation(Throwable failure) {
        return failure instanceof CancellationException;
    }
}
