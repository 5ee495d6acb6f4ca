package io.weft.combinators;

import io.weft.Future;
import io.weft.Io;
import io.weft.testing.Parked;
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
    /** The thread running the task's body: the helper thread under an inline Io, else a fiber. */
    private final AtomicReference<Thread> runner = new AtomicReference<>();

    private final CompletableFuture<Object> outcome = new CompletableFuture<>(); // value or Throwable

    private Elsewhere(Io io, Callable<T> body) {
        Thread.ofPlatform().daemon().name("elsewhere").start(() -> {
            try {
                outcome.complete(Io.with(io)
                        .call(() -> Io.async(() -> {
                                    runner.set(Thread.currentThread());
                                    task.set(Io.currentTask().orElseThrow());
                                    return body.call();
                                })
                                .await()));
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

    /**
     * Waits until the task's body (the helper thread under an inline Io, the fiber under FiberIo)
     * is parked at a Weft suspend point inside {@code method} of {@code owner}; fails at once if
     * the body finished instead.
     */
    void awaitParkedIn(Class<?> owner, String method) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(2))
                .until(() -> {
                    if (outcome.isDone()) {
                        throw new AssertionError("the body finished instead of parking in " + owner.getSimpleName()
                                + "." + method + ": " + outcome.getNow(null));
                    }
                    Thread body = runner.get();
                    return body != null && Parked.at(body, owner, method);
                });
    }

    /** The body's outcome as seen by the helper thread: its value, or the exception it threw. */
    Object outcome() throws Exception {
        return outcome.get(30, TimeUnit.SECONDS);
    }
}
