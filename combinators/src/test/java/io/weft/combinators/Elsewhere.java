package io.weft.combinators;

import io.weft.Future;
import io.weft.Io;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;

/**
 * Starts a task from a helper thread, so the test thread stays free to cancel it or to release
 * what it waits for even under an inline Io (which would block the starting thread).
 */
final class Elsewhere<T> {
    private final AtomicReference<Future<?>> task = new AtomicReference<>();
    private final CompletableFuture<Object> outcome = new CompletableFuture<>(); // value or Throwable
    private final Thread thread;

    private Elsewhere(Io io, Callable<T> body) {
        thread = Thread.ofPlatform().daemon().name("elsewhere").start(() -> {
            try {
                outcome.complete(Io.with(io).call(() -> Io.async(() -> {
                    task.set(Io.currentTask().orElseThrow());
                    return body.call();
                }).await()));
            } catch (Throwable t) {
                outcome.complete(t); // not completeExceptionally: CF would unwrap or cancel
            }
        });
    }

    /** Starts {@code body} as a task on {@code io} from a new helper thread. */
    static <T> Elsewhere<T> start(Io io, Callable<T> body) {
        return new Elsewhere<>(io, body);
    }

    /** The task's future, once it has started. */
    Future<?> task() {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> task.get() != null);
        return task.get();
    }

    /** Waits until the helper thread is parked (useful under an inline Io). */
    void awaitThreadParked() {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> thread.getState() == Thread.State.WAITING
                || thread.getState() == Thread.State.TIMED_WAITING || outcome.isDone());
    }

    /** The body's outcome as seen by the helper thread: its value, or the exception it threw. */
    Object outcome() throws Exception {
        return outcome.get(30, TimeUnit.SECONDS);
    }
}
