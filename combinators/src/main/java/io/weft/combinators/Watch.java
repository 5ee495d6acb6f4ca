package io.weft.combinators;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.Registration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Waiting on many futures with one {@link ParkToken} and no task per input: the engine behind
 * {@link Futures#race}, {@link Futures#any}, {@link Futures#all} and {@link Futures#zip}.
 * Package-private; every method is called by the waiting task itself.
 */
final class Watch {
    /*
     * Implementation notes.
     *
     * firstDecisive(inputs, decisive) parks the caller until one input completes with an outcome
     * the operator calls decisive (race: any outcome; any: a value; all/zip: anything but a value)
     * or until every input is done. Each input gets an onDone registration whose action
     *   1. counts the input done (remaining, an AtomicInteger), and
     *   2. if its outcome is decisive, claims the winner slot (winner, CAS from -1), then
     *   3. readies the one token if it claimed the slot or counted the last input.
     * Only the claimer and the last counter ready, so one suspendRaw suffices: it returns only
     * once the token is ready, and then the slot is claimed or every input is done.
     *
     * Ties: inputs done before registration has finished (on entry, or while registering; an
     * onDone on a done future runs at once on this thread) are "done when looked at" and tie, so
     * the lowest index wins, as in Io.race. Only a completion that wakes the parked caller is
     * ordered by the CAS, i.e. by completion order.
     *
     * Every registration is closed in a finally block on every exit path, so a long-lived input
     * that loses many races does not accumulate dead actions. A stale ready after that hits a
     * one-shot token nobody parks on any more.
     *
     * Cancellation: the caller's cancellation surfaces as Cancelled from checkpoint() on entry
     * or from suspendRaw; the operator decides what to cancel then.
     */

    /** firstDecisive's answer when every input is done and none was decisive. */
    static final int NONE = -1;

    private Watch() {}

    /**
     * Waits until an input is done with a decisive outcome, or all are done.
     *
     * @return the index of the first decisive input (ties: lowest index), or {@link #NONE}
     * @throws Cancelled if the calling task is cancelled (on entry or while waiting)
     */
    static int firstDecisive(List<? extends Future<?>> inputs, Predicate<Future<?>> decisive) {
        Io io = Io.current();
        checkpoint(io);
        int looked = lookFirst(inputs, decisive);
        if (looked != NONE || allDone(inputs)) {
            return looked;
        }
        int n = inputs.size();
        ParkToken token = ParkToken.create(inputs);
        AtomicInteger winner = new AtomicInteger(NONE);
        AtomicInteger remaining = new AtomicInteger(n);
        Registration[] registrations = new Registration[n];
        try {
            for (int i = 0; i < n; i++) {
                Future<?> input = inputs.get(i);
                int index = i;
                registrations[i] = input.onDone(() -> {
                    boolean claimed = decisive.test(input) && winner.compareAndSet(NONE, index);
                    boolean last = remaining.decrementAndGet() == 0;
                    if (claimed || last) {
                        io.ready(token);
                    }
                });
            }
            if (winner.get() != NONE || remaining.get() == 0) {
                return lookFirst(inputs, decisive); // done while registering: a tie, lowest index
            }
            io.suspendRaw(token);
            return winner.get();
        } finally {
            for (Registration registration : registrations) {
                if (registration != null) {
                    registration.close();
                }
            }
        }
    }

    private static int lookFirst(List<? extends Future<?>> inputs, Predicate<Future<?>> decisive) {
        for (int i = 0; i < inputs.size(); i++) {
            Future<?> input = inputs.get(i);
            if (input.isDone() && decisive.test(input)) {
                return i;
            }
        }
        return NONE;
    }

    private static boolean allDone(List<? extends Future<?>> inputs) {
        for (Future<?> input : inputs) {
            if (!input.isDone()) {
                return false;
            }
        }
        return true;
    }

    /**
     * A suspend point that does not wait: throws {@link Cancelled} if the calling task's
     * cancellation is in effect (not shielded), else returns at once.
     */
    static void checkpoint(Io io) {
        ParkToken token = ParkToken.create();
        io.ready(token);
        io.suspendRaw(token);
    }

    /**
     * Waits until {@code future} is done, ignoring its outcome; shielded, so the calling task's
     * own cancellation does not end the wait (it takes effect at its next suspend point).
     */
    static void joinShielded(Future<?> future) {
        if (future.isDone()) {
            return;
        }
        waitThrough(() -> {
            try {
                future.await();
            } catch (Cancelled c) {
                if (!future.isDone()) {
                    throw c; // the wait itself ended (a plain thread's interrupt): waitThrough retries
                }
            } catch (RuntimeException | Error ignored) {
                // the outcome is reported elsewhere; joining only waits for the end
            }
        });
    }

    /**
     * Runs {@code wait} to its end whatever happens to the caller: inside a task under a shield
     * (its cancellation waits); on a plain thread, under a shield too (it defers the scopes the
     * thread owns) and, since an interrupt ends a plain wait with {@link Cancelled}, by clearing
     * the interrupt, waiting again, and setting the flag again once done. Used where "no child outlives the scope" and "the body has
     * unwound before timeout returns" depend on the wait finishing.
     */
    static void waitThrough(Runnable wait) {
        if (Io.currentTask().isPresent()) {
            Io.shield(wait);
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                try {
                    Io.shield(wait);
                    return;
                } catch (Cancelled c) {
                    if (!Thread.interrupted()) {
                        throw c;
                    }
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Joins every future in {@code futures}, shielded; see {@link #joinShielded(Future)}. */
    static void joinAllShielded(Iterable<? extends Future<?>> futures) {
        for (Future<?> future : futures) {
            joinShielded(future);
        }
    }

    /** Cancels every future in {@code futures}. */
    static void cancelAll(Iterable<? extends Future<?>> futures) {
        for (Future<?> future : futures) {
            future.cancel();
        }
    }

    /** Checks a list argument: non-null list and elements, NPE naming {@code name} or {@code name[i]}. */
    static <F> List<F> requireElements(List<F> list, String name) {
        Objects.requireNonNull(list, name);
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i) == null) {
                throw new NullPointerException(name + "[" + i + "]");
            }
        }
        return List.copyOf(list);
    }

    /** Throws {@link IllegalStateException} if the calling task's own future is among {@code inputs}. */
    static void requireNotSelf(List<? extends Future<?>> inputs, String operator) {
        Future<?> me = Io.currentTask().orElse(null);
        if (me == null) {
            return;
        }
        for (Future<?> input : inputs) {
            if (input == me) {
                throw new IllegalStateException(
                        me + " waits for its own future in " + operator + ": it would never finish");
            }
        }
    }

    /** Returns {@code failure} as an unchecked exception: itself if unchecked, else wrapped. */
    static RuntimeException unchecked(Throwable failure) {
        if (failure instanceof RuntimeException runtime) {
            return runtime;
        }
        if (failure instanceof Error error) {
            throw error;
        }
        return new CompletionException(failure);
    }

    /** Adds {@code extra} to {@code primary}'s suppressed exceptions unless they are the same. */
    static void suppress(Throwable primary, Throwable extra) {
        if (primary != extra) {
            primary.addSuppressed(extra);
        }
    }
}
