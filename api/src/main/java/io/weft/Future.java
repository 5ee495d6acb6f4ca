package io.weft;

import io.weft.internal.Task;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The typed result of a task started with {@link Io#async}: await it, cancel it, race it.
 * Thread-safe: any number of tasks and threads may await, inspect or cancel one future.
 *
 * <p>A future is <em>done</em> once its task has finished, with a value ({@link State#SUCCESS}),
 * an exception ({@link State#FAILED}) or a cancellation ({@link State#CANCELLED}). Futures are made
 * by Weft only ({@link Io#async}, {@link #from}, {@link #completed}, {@link #failed}); do not
 * implement this interface.
 *
 * {@snippet :
 * Future<Integer> answer = Io.async(() -> 6 * 7);
 * int value = answer.await();          // suspends the calling task (or blocks a plain thread)
 * }
 *
 * @param <T> the type of the value
 */
public interface Future<T> {

    /** Where a future is in its life. */
    enum State {
        /** Not done yet: not started, running, or cancelled but still unwinding. */
        PENDING,
        /** Done with a value. */
        SUCCESS,
        /**
         * Done with an exception other than a cancellation ({@link Cancelled}, or any
         * {@link java.util.concurrent.CancellationException} the body threw).
         */
        FAILED,
        /** Done by cancellation. */
        CANCELLED
    }

    /**
     * Suspends the calling task until this future is done and returns its value. Awaiting from a
     * plain thread (not a task) blocks that thread; it may first yield briefly in case the future
     * is done by then. A future that is already done reports at once, without a suspend point.
     *
     * <ul>
     *   <li>An unchecked failure ({@link RuntimeException}, {@link Error}) is rethrown as the same
     *       instance;
     *   <li>a checked failure is wrapped in {@link java.util.concurrent.CompletionException};
     *   <li>a cancelled future throws {@link Cancelled}.
     * </ul>
     * The calling task's own cancellation takes effect while it waits: it throws {@code Cancelled}
     * and leaves this future untouched. A plain thread that is interrupted while it waits throws
     * {@code Cancelled} too, with its interrupt flag still set. Any number of awaiters may wait at
     * once.
     *
     * @return the value
     * @throws Cancelled if this future was cancelled, the calling task is cancelled while waiting,
     *     or the calling plain thread is interrupted while waiting
     * @throws IllegalStateException if a task awaits its own future, a task that runs it inline
     *     (under an inline Io), or an await cycle between tasks is seen (they would wait forever)
     */
    T await();

    /**
     * Like {@link #await()}, but gives up after {@code timeout} on the installed Io's clock (on a
     * plain thread with nothing installed, the clock of the Io this future's task runs on, so no
     * default Io is needed; a future made by {@link #from}, {@link #completed} or
     * {@link #failed} has no Io of its own and uses the installed or default one). Giving up does
     * not cancel this future. A timed await ends by itself, so it is never reported as an await
     * cycle, however long its timeout; a task awaiting its own
     * future this way simply times out (with a timeout too long to represent, it waits until it is
     * cancelled).
     *
     * @param timeout how long to wait at most; zero or negative only looks
     * @return the value
     * @throws TimedOut if the future is not done in time
     * @throws Cancelled if this future was cancelled, the calling task is cancelled while waiting,
     *     or the calling plain thread is interrupted while waiting
     * @throws NullPointerException if {@code timeout} is null
     */
    T await(Duration timeout);

    /**
     * Requests cancellation and returns at once; returns {@code false} if this future is already
     * done.
     *
     * <p>Cancellation is cooperative: it takes effect at the task's <em>next suspend point</em>
     * ({@link Io#suspendRaw}, used by await, sleep, race...). A task parked right now is woken and
     * its suspend point throws {@link Cancelled}; a task computing keeps computing until it
     * suspends. Cancellation is <em>sticky</em>: every later suspend point throws too, so
     * {@code finally} blocks run and the task unwinds. A task cancelled before it starts never runs
     * its body and is done at once. Inside {@link Io#shield} the cancellation waits until the
     * outermost shield exits.
     *
     * <p>The future is done when the task has unwound: {@link State#CANCELLED}, or
     * {@link State#FAILED} if it unwound with another exception (never replaced). A value returned
     * by a task after cancellation was requested is dropped and the future is cancelled.
     *
     * @return {@code false} if already done, or its outcome is being recorded at this moment;
     *     else {@code true} (the request is registered)
     */
    boolean cancel();

    /**
     * Returns whether this future is done (succeeded, failed or cancelled).
     *
     * @return {@code true} once done
     */
    boolean isDone();

    /**
     * Returns where this future is in its life.
     *
     * @return the current state
     */
    State state();

    /**
     * Returns the value of a future that succeeded, without waiting.
     *
     * @return the value
     * @throws IllegalStateException if the future is not done or did not succeed
     */
    T resultNow();

    /**
     * Returns the exception of a future that failed, without waiting.
     *
     * @return the exception, as the task threw it
     * @throws IllegalStateException if the future is not done or did not fail
     */
    Throwable exceptionNow();

    /**
     * Registers {@code action} to run once when this future is done: at once on the calling thread
     * if it already is, else on the thread that completes it. The action should be short and must
     * not block (it runs inside the completion of the task); an exception it throws goes to that
     * thread's uncaught-exception handler. Closing the returned registration before the action
     * runs deregisters it, so a waiter that gives up leaves nothing behind. The building block of
     * combinators that wait for one of many futures.
     *
     * @param action what to run when done
     * @return a registration whose {@code close()} deregisters the action
     * @throws NullPointerException if {@code action} is null
     */
    Registration onDone(Runnable action);

    /**
     * Returns a {@link CompletableFuture} completed with this future's outcome (a failure as it is,
     * a cancellation as a {@link java.util.concurrent.CancellationException}). Cancelling the
     * returned future cancels this one. Dependent actions run on the thread that completes this
     * future unless given an executor.
     *
     * @return a new CompletableFuture mirroring this future
     */
    CompletableFuture<T> toCompletableFuture();

    /**
     * Returns a future completed by {@code stage}: its value, its failure (a
     * {@link java.util.concurrent.CompletionException} is unwrapped), or a cancellation for a
     * {@link java.util.concurrent.CancellationException}. Cancelling the returned future completes
     * it as cancelled at once and leaves {@code stage} alone.
     *
     * @param stage the stage to mirror
     * @param <T> the value's type
     * @return a future that completes with {@code stage}
     * @throws NullPointerException if {@code stage} is null
     */
    static <T> Future<T> from(CompletionStage<? extends T> stage) {
        Objects.requireNonNull(stage, "stage");
        return Task.fromStage(stage);
    }

    /**
     * Returns a future that has already succeeded with {@code value}.
     *
     * @param value the value, may be null
     * @param <T> the value's type
     * @return a done future
     */
    static <T> Future<T> completed(T value) {
        return Task.succeeded(value);
    }

    /**
     * Returns a future that has already failed with {@code failure} (cancelled, if it is a
     * {@link java.util.concurrent.CancellationException}, as for {@link #from} and a task's body).
     *
     * @param failure the exception
     * @param <T> the value's type
     * @return a done future
     * @throws NullPointerException if {@code failure} is null
     */
    static <T> Future<T> failed(Throwable failure) {
        Objects.requireNonNull(failure, "failure");
        return Task.failedWith(failure);
    }
}
