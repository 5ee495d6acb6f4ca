package io.weft.combinators;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * Operators over {@link Future}s, written against the {@link Io} API only, so they behave the
 * same under every Io. Stateless and thread-safe; every method is called from the task that
 * wants the result (or a plain thread) and uses the {@linkplain Io#current() installed} Io.
 *
 * <h2>Who is cancelled when</h2>
 * <ul>
 *   <li><b>Waiting operators</b> ({@link #all}, {@link #any}, {@link #race}): they cancel the
 *       inputs whose outcome no longer matters once the answer is known, and <em>all</em> inputs
 *       if the waiting task itself is cancelled (which then throws {@link Cancelled}). They wait
 *       with {@link Future#onDone} registrations and one park, never a task per input, and
 *       deregister on every exit.
 *   <li><b>Scoped bodies</b> ({@link #timeout}, {@link #timeoutOrDefault}): the body runs as a
 *       task owned by the call; it is cancelled at the deadline or when the caller is cancelled,
 *       and always joined (shielded) before the call returns, so its {@code finally} has run.
 *   <li><b>{@link #retry}</b> runs its body in the calling task; a {@link Cancelled} from the
 *       body or from a backoff sleep stops it at once.
 *   <li><b>Transformations</b> ({@link #map}, {@link #flatMap}, {@link #zip},
 *       {@link #whenComplete}): each spawns one task (with {@link Io#async}) that awaits its
 *       inputs and applies the function, and returns that task's future. Cancelling the result
 *       cancels only that task (and, for {@code flatMap}, the inner future it made); the
 *       <em>inputs are never cancelled</em>: they may have other consumers, and whoever made them
 *       owns them. Under an inline Io (BlockingIo) the task runs before the operator returns, so
 *       transforming a future that is still pending blocks until it completes.
 * </ul>
 *
 * <h2>Outcomes</h2>
 * Outcomes are reported as {@link Future#await()} reports them: a value; an unchecked failure as
 * the same instance; a checked failure wrapped in {@link CompletionException}; {@link Cancelled}
 * for a cancelled future. Inputs that are already done when an operator looks at them tie, and
 * ties go to the lower index, so outcomes are deterministic; under BlockingIo every input made by
 * {@code Io.async} is already done: the same rules, a different interleaving.
 *
 * <h2>Bad input</h2>
 * A null argument or list element throws {@link NullPointerException} naming it
 * ({@code "futures[2]"}); an empty list is documented per operator. Waiting on the calling task's
 * own future throws {@link IllegalStateException} instead of hanging.
 */
public final class Futures {
    private Futures() {}

    // ---------------------------------------------------------------- waiting on many

    /**
     * Waits for every input to succeed and returns their values in input order, or fails fast.
     *
     * <p>Who is cancelled when: the first input to end without a value (failed or cancelled;
     * ties: lowest index) makes {@code all} cancel every other input and rethrow that outcome at
     * once (it does not wait for the others to unwind). If the calling task is cancelled, every
     * input is cancelled and {@link Cancelled} is thrown. On success nothing is cancelled.
     *
     * @param futures the inputs; an empty list gives an empty result at once
     * @param <T> the value type
     * @return the values, in input order (an unmodifiable list, may contain nulls)
     * @throws Cancelled if the first unsuccessful input was cancelled, or the caller is cancelled
     * @throws CompletionException wrapping the first failure if it is a checked exception; an
     *     unchecked failure is rethrown as it is
     * @throws NullPointerException if {@code futures} or an element is null
     * @throws IllegalStateException if the calling task's own future is an input
     */
    public static <T> List<T> all(List<? extends Future<? extends T>> futures) {
        List<? extends Future<? extends T>> inputs = Watch.requireElements(futures, "futures");
        Watch.requireNotSelf(inputs, "all");
        int failed;
        try {
            failed = Watch.firstDecisive(inputs, input -> input.state() != Future.State.SUCCESS);
        } catch (Cancelled c) {
            Watch.cancelAll(inputs);
            throw c;
        }
        if (failed != Watch.NONE) {
            Future<? extends T> first = inputs.get(failed);
            Watch.cancelAll(inputs);
            first.await(); // done: rethrows its failure without suspending
            throw new AssertionError("unreachable: " + first + " did not succeed");
        }
        List<T> values = new ArrayList<>(inputs.size());
        for (Future<? extends T> input : inputs) {
            values.add(input.resultNow());
        }
        return Collections.unmodifiableList(values);
    }

    /**
     * Waits for the first input to succeed and returns its value; fails only if every input fails.
     *
     * <p>Who is cancelled when: once one input succeeds (ties: lowest index), every other input is
     * cancelled and the value returned at once. Failures and cancellations of inputs are
     * collected, not propagated, while another input may still succeed. If the calling task is
     * cancelled, every input is cancelled and {@link Cancelled} is thrown.
     *
     * @param futures the inputs; must not be empty
     * @param <T> the value type
     * @return the value of the first input to succeed
     * @throws CompletionException if every input failed or was cancelled; it carries each
     *     input's failure (or {@code Cancelled}) as a suppressed exception, in input order
     * @throws Cancelled if the calling task is cancelled
     * @throws IllegalArgumentException if {@code futures} is empty (nothing can succeed)
     * @throws NullPointerException if {@code futures} or an element is null
     * @throws IllegalStateException if the calling task's own future is an input
     */
    public static <T> T any(List<? extends Future<? extends T>> futures) {
        List<? extends Future<? extends T>> inputs = requireNonEmpty(futures, "any");
        Watch.requireNotSelf(inputs, "any");
        int winner;
        try {
            winner = Watch.firstDecisive(inputs, input -> input.state() == Future.State.SUCCESS);
        } catch (Cancelled c) {
            Watch.cancelAll(inputs);
            throw c;
        }
        if (winner != Watch.NONE) {
            Watch.cancelAll(inputs);
            return inputs.get(winner).resultNow();
        }
        CompletionException allFailed = new CompletionException("all " + inputs.size() + " inputs failed", null);
        for (Future<? extends T> input : inputs) {
            allFailed.addSuppressed(
                    input.state() == Future.State.FAILED
                            ? input.exceptionNow()
                            : new Cancelled(input + " was cancelled"));
        }
        throw allFailed;
    }

    /**
     * Waits for the first input to complete and reports its outcome: the n-ary {@link Io#race}.
     *
     * <p>The winner is the first input to complete with a value, a failure or a cancellation;
     * inputs already done when the race looks at them tie, and ties go to the lowest index.
     *
     * <p>Who is cancelled when: every loser is cancelled once the winner is known; with
     * {@link LoserPolicy#JOIN_LOSERS} the race then waits, shielded, until the losers have
     * unwound. If the racing task is cancelled, every input is cancelled (and, with
     * {@code JOIN_LOSERS}, joined) and {@link Cancelled} is thrown. Registrations on the inputs
     * are removed on every exit.
     *
     * @param futures the inputs; must not be empty
     * @param policy whether to wait for the losers to unwind
     * @param <T> the value type
     * @return the winner's value
     * @throws Cancelled if the winner was cancelled or the racing task is cancelled
     * @throws CompletionException wrapping the winner's checked failure; an unchecked failure is
     *     rethrown as it is
     * @throws IllegalArgumentException if {@code futures} is empty (no winner is possible)
     * @throws NullPointerException if {@code futures}, an element or {@code policy} is null
     * @throws IllegalStateException if the calling task's own future is an input
     */
    public static <T> T race(List<? extends Future<? extends T>> futures, LoserPolicy policy) {
        List<? extends Future<? extends T>> inputs = requireNonEmpty(futures, "race");
        Objects.requireNonNull(policy, "policy");
        Watch.requireNotSelf(inputs, "race");
        int winner;
        try {
            winner = Watch.firstDecisive(inputs, input -> true);
        } catch (Cancelled c) {
            Watch.cancelAll(inputs);
            if (policy == LoserPolicy.JOIN_LOSERS) {
                Watch.joinAllShielded(inputs);
            }
            throw c;
        }
        Future<? extends T> first = inputs.get(winner);
        Watch.cancelAll(inputs); // a no-op on the winner: it is done
        if (policy == LoserPolicy.JOIN_LOSERS) {
            Watch.joinAllShielded(inputs);
        }
        return first.await(); // done: reports without suspending
    }

    // ---------------------------------------------------------------- deadlines

    /**
     * Runs {@code body} as a task and returns its value if it completes within {@code duration}
     * on the installed Io's clock; otherwise cancels it and throws {@link TimedOut}.
     *
     * <p>Who is cancelled when: the body task is cancelled at the deadline, or when the calling
     * task is cancelled; either way {@code timeout} then waits, shielded, for the body to finish
     * unwinding, so the body's {@code finally} blocks have run before it returns or throws.
     *
     * <p>The deadline is {@code duration} after the call, rounded up to whole milliseconds, on
     * {@link Io#nowMs()}. A body that completes exactly at the deadline may count as in time
     * or not, depending on which the Io runs first: the body's completion or the deadline. Under
     * an inline Io (BlockingIo) the body runs to completion before it can be looked at and cannot
     * be cancelled midway: if it completed after the deadline its value is dropped (its failure
     * is attached as suppressed) and {@code TimedOut} is thrown, the same outcome as on a
     * scheduling Io, where the body is cancelled at the deadline.
     *
     * {@snippet :
     * String page = Futures.timeout(Duration.ofSeconds(2), () -> fetch(url));
     * }
     *
     * @param duration how long the body may take; zero or negative leaves no time (only a body
     *     that completes at once under an inline Io is in time)
     * @param body the code to run as a task
     * @param <T> the value type
     * @return the body's value
     * @throws TimedOut if the body did not complete by the deadline
     * @throws Cancelled if the calling task is cancelled, or the body ended cancelled
     * @throws CompletionException wrapping a checked failure of the body; an unchecked one is
     *     rethrown as it is
     * @throws NullPointerException if {@code duration} or {@code body} is null
     */
    public static <T> T timeout(Duration duration, Callable<? extends T> body) {
        Deadline<T> outcome = runWithDeadline(duration, body);
        if (outcome.expired() != null) {
            throw outcome.expired();
        }
        return outcome.value();
    }

    /**
     * Like {@link #timeout}, but returns {@code fallback} instead of throwing when the deadline
     * passes. A {@link TimedOut} thrown by the body itself is a failure of the body and is
     * rethrown, not replaced by the fallback. Cancellation rules as for {@code timeout}.
     *
     * @param duration how long the body may take
     * @param body the code to run as a task
     * @param fallback what to return if the deadline passes; may be null
     * @param <T> the value type
     * @return the body's value, or {@code fallback}
     * @throws Cancelled if the calling task is cancelled, or the body ended cancelled
     * @throws CompletionException wrapping a checked failure of the body
     * @throws NullPointerException if {@code duration} or {@code body} is null
     */
    public static <T> T timeoutOrDefault(Duration duration, Callable<? extends T> body, T fallback) {
        Deadline<T> outcome = runWithDeadline(duration, body);
        return outcome.expired() != null ? fallback : outcome.value();
    }

    /** The outcome of a body run under a deadline: its value, or the TimedOut to throw. */
    private record Deadline<T>(T value, TimedOut expired) {}

    private static <T> Deadline<T> runWithDeadline(Duration duration, Callable<? extends T> body) {
        Objects.requireNonNull(duration, "duration");
        Objects.requireNonNull(body, "body");
        Io io = Io.current();
        long limitMs = Math.max(0, ceilMillis(duration)); // a negative duration leaves no time, as zero does
        long start = io.nowMs();
        Future<? extends T> task = Io.async(body);
        if (task.isDone()) {
            // An inline Io ran the body to completion: judge it by the clock.
            if (io.nowMs() - start > limitMs) {
                return new Deadline<>(null, expired(duration, task));
            }
            return new Deadline<>(task.await(), null);
        }
        try {
            return new Deadline<>(task.await(duration), null);
        } catch (TimedOut deadlinePassed) {
            if (!task.cancel()) {
                return new Deadline<>(task.await(), null); // completed just as the deadline passed
            }
            Watch.joinShielded(task);
            return new Deadline<>(null, expired(duration, task));
        } catch (Cancelled c) {
            if (!task.isDone()) { // the caller was cancelled, not the body
                task.cancel();
                Watch.joinShielded(task);
            }
            throw c;
        }
    }

    private static TimedOut expired(Duration duration, Future<?> task) {
        TimedOut expired = new TimedOut("the body did not complete within " + duration);
        if (task.state() == Future.State.FAILED) {
            expired.addSuppressed(task.exceptionNow());
        }
        return expired;
    }

    /** {@code duration} in whole milliseconds, rounded up, saturating; negative stays negative. */
    static long ceilMillis(Duration duration) {
        try {
            long millis = duration.toMillis();
            return duration.minusMillis(millis).isZero() || duration.isNegative() ? millis : Math.addExact(millis, 1);
        } catch (ArithmeticException overflow) {
            return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    // ---------------------------------------------------------------- retry

    /**
     * Calls {@code body} in the calling task until it succeeds or {@code policy} gives up,
     * sleeping between attempts on the installed Io's clock ({@link Io#sleep}).
     *
     * <p>Attempt 1 runs at once; after failed attempt {@code k} (if {@code k <
     * policy.maxAttempts()} and the failure is {@linkplain RetryPolicy#retryOn() retryable}) the
     * caller sleeps {@link RetryPolicy#delayAfter policy.delayAfter(k, random)} and tries again.
     * The last failure is rethrown, with the earlier attempts' failures attached as suppressed.
     *
     * <p>Who is cancelled when: nothing is spawned, so nothing else is cancelled. A
     * {@link Cancelled} thrown by the body, or by a backoff sleep because the calling task was
     * cancelled, stops the retries at once and propagates; it is never retried.
     *
     * {@snippet :
     * RetryPolicy policy = RetryPolicy.builder().maxAttempts(5).initialDelay(Duration.ofMillis(100)).build();
     * Response r = Futures.retry(policy, () -> client.get(url));
     * }
     *
     * @param policy how many attempts, how long to wait between them, which failures to retry
     * @param body the code to call
     * @param <T> the value type
     * @return the value of the first successful attempt
     * @throws Cancelled if the body is cancelled or the calling task is cancelled (cancelled in
     *     a back-off, it carries the failed attempts' exceptions as suppressed)
     * @throws CompletionException wrapping the last failure if it is a checked exception; an
     *     unchecked one is rethrown as it is
     * @throws NullPointerException if {@code policy} or {@code body} is null
     */
    public static <T> T retry(RetryPolicy policy, Callable<? extends T> body) {
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(body, "body");
        RandomGenerator random = null;
        List<Throwable> earlier = new ArrayList<>();
        for (int attempt = 1; ; attempt++) {
            try {
                return body.call();
            } catch (Cancelled c) {
                throw c;
            } catch (Throwable failure) {
                if (attempt >= policy.maxAttempts() || !policy.retryOn().test(failure)) {
                    throw Watch.unchecked(carrying(failure, earlier));
                }
                earlier.add(failure);
                if (random == null) {
                    random = Objects.requireNonNull(policy.random().get(), "policy.random() returned null");
                }
                try {
                    Io.sleep(policy.delayAfter(attempt, random));
                    Io.checkpoint(); // a zero delay has no suspend point: a cancel must still stop the retries
                } catch (Cancelled c) { // cancelled in the back-off: the failures so far ride on it
                    throw (Cancelled) carrying(c, earlier);
                }
            }
        }
    }

    /** Adds the earlier attempts' failures to {@code primary} as suppressed; returns it. */
    private static Throwable carrying(Throwable primary, List<Throwable> earlier) {
        for (Throwable previous : earlier) {
            Watch.suppress(primary, previous);
        }
        return primary;
    }

    // ---------------------------------------------------------------- transformations

    /**
     * Returns a future of {@code fn} applied to {@code source}'s value.
     *
     * <p>Spawns one task that awaits {@code source} and applies {@code fn}. If {@code source}
     * fails or is cancelled, the result fails with the same exception or is cancelled; if
     * {@code fn} throws, the result fails with that. Who is cancelled when: cancelling the
     * result cancels only the mapping task; {@code source} is left alone (cancel it yourself if
     * you own it).
     *
     * @param source the future to transform
     * @param fn the function to apply to its value
     * @param <T> the source's value type
     * @param <R> the result's value type
     * @return the mapping task's future
     * @throws NullPointerException if {@code source} or {@code fn} is null
     */
    public static <T, R> Future<R> map(Future<? extends T> source, Function<? super T, ? extends R> fn) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(fn, "fn");
        return Io.async(() -> fn.apply(awaitAsIs(source)));
    }

    /**
     * Awaits {@code input} inside a transformation's task: its value, or its failure as the same
     * instance even when checked (an await wraps a checked one in a CompletionException of its
     * own, which the task would then fail with), or the Cancelled.
     */
    private static <T> T awaitAsIs(Future<T> input) throws Exception {
        try {
            return input.await();
        } catch (CompletionException wrapped) {
            if (input.state() == Future.State.FAILED && wrapped.getCause() == input.exceptionNow()) {
                if (wrapped.getCause() instanceof Exception checked) {
                    throw checked;
                }
            }
            throw wrapped;
        }
    }

    /**
     * Returns a future of the future that {@code fn} makes from {@code source}'s value.
     *
     * <p>Spawns one task that awaits {@code source}, calls {@code fn}, then awaits the future it
     * returns. Outcomes propagate as for {@link #map}; {@code fn} returning null fails the result
     * with {@link NullPointerException}. Who is cancelled when: cancelling the result cancels the
     * task and, if {@code fn} has already made it, the inner future (it was made for this result);
     * {@code source} is left alone.
     *
     * @param source the future to transform
     * @param fn the function from its value to the next future
     * @param <T> the source's value type
     * @param <R> the result's value type
     * @return the task's future
     * @throws NullPointerException if {@code source} or {@code fn} is null
     */
    public static <T, R> Future<R> flatMap(
            Future<? extends T> source, Function<? super T, ? extends Future<? extends R>> fn) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(fn, "fn");
        return Io.async(() -> {
            Future<? extends R> inner = Objects.requireNonNull(fn.apply(awaitAsIs(source)), "fn returned null");
            try {
                return awaitAsIs(inner);
            } catch (Cancelled c) {
                inner.cancel(); // no-op if the inner future itself ended cancelled
                throw c;
            }
        });
    }

    /**
     * Returns a future of {@code combiner} applied to the values of {@code a} and {@code b}.
     *
     * <p>Spawns one task that waits for both. It fails fast: the first input to end without a
     * value (ties: {@code a}) decides the result's failure or cancellation at once, without
     * waiting for the other. Who is cancelled when: cancelling the result cancels only the task;
     * neither input is ever cancelled, not even when the other fails.
     *
     * @param a the first input
     * @param b the second input
     * @param combiner combines the two values
     * @param <A> the first value type
     * @param <B> the second value type
     * @param <R> the result's value type
     * @return the task's future
     * @throws NullPointerException if an argument is null
     */
    public static <A, B, R> Future<R> zip(
            Future<? extends A> a, Future<? extends B> b, BiFunction<? super A, ? super B, ? extends R> combiner) {
        Objects.requireNonNull(a, "a");
        Objects.requireNonNull(b, "b");
        Objects.requireNonNull(combiner, "combiner");
        List<Future<?>> inputs = List.of(a, b);
        return Io.async(() -> {
            Watch.requireNotSelf(inputs, "zip");
            int failed = Watch.firstDecisive(inputs, input -> input.state() != Future.State.SUCCESS);
            if (failed != Watch.NONE) {
                awaitAsIs(inputs.get(failed)); // done: rethrows without suspending
            }
            return combiner.apply(a.resultNow(), b.resultNow());
        });
    }

    /**
     * Returns a future with {@code source}'s outcome that completes after {@code action} has seen
     * that outcome: {@code action.accept(value, null)} on success,
     * {@code action.accept(null, failure)} on failure ({@link Cancelled} if {@code source} was
     * cancelled).
     *
     * <p>Spawns one task that waits for {@code source} (without throwing), runs {@code action},
     * then reports {@code source}'s outcome. If {@code action} throws, a successful source's
     * result fails with the action's exception; a failed source's failure is kept and the
     * action's exception attached to it as suppressed. Who is cancelled when: cancelling the
     * result cancels only the task; if the cancel comes before the task has started, or ends its
     * wait while {@code source} is still not done, the action does not run (a cancel that finds
     * the task waiting with {@code source} done lets the action see its outcome, and the result
     * is cancelled). {@code source} is left alone.
     *
     * @param source the future to observe
     * @param action what to run with its outcome
     * @param <T> the value type
     * @return the task's future
     * @throws NullPointerException if {@code source} or {@code action} is null
     */
    public static <T> Future<T> whenComplete(Future<T> source, BiConsumer<? super T, ? super Throwable> action) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(action, "action");
        return Io.async(() -> {
            T value;
            try {
                value = source.await();
            } catch (RuntimeException | Error failure) {
                if (!source.isDone()) {
                    throw failure; // this task was cancelled while waiting
                }
                if (source.state() == Future.State.SUCCESS) {
                    // this task's cancel landed after the source's value readied it: the action
                    // sees the value (the source was done first), the task ends cancelled
                    try {
                        action.accept(source.resultNow(), null);
                    } catch (RuntimeException | Error actionFailure) {
                        Watch.suppress(failure, actionFailure);
                    }
                    throw failure;
                }
                Throwable reported = source.state() == Future.State.FAILED ? source.exceptionNow() : failure;
                try {
                    action.accept(null, reported);
                } catch (RuntimeException | Error actionFailure) {
                    Watch.suppress(reported, actionFailure);
                }
                if (reported instanceof Exception exception) {
                    throw exception; // the same instance, checked or not, as the source's failure
                }
                throw (Error) reported;
            }
            action.accept(value, null);
            return value;
        });
    }

    private static <F> List<F> requireNonEmpty(List<F> futures, String operator) {
        List<F> inputs = Watch.requireElements(futures, "futures");
        if (inputs.isEmpty()) {
            throw new IllegalArgumentException(operator + " of no futures has no outcome");
        }
        return inputs;
    }
}
