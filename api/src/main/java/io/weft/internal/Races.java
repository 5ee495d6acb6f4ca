package io.weft.internal;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/** {@link Io#race} and {@link Io#raceAndJoin}: two inputs, one waiter, the loser cancelled. */
public final class Races {
    /*
     * Implementation notes.
     *
     * One ParkToken serves both inputs: each input gets a waiter whose action readies it, so
     * whichever completes first wakes the racer. Registration happens before the re-check of
     * both inputs, so a completion between the first look and the park is never missed (the
     * waiter either runs, or was refused because the input was already done).
     *
     * First to complete: each waiter action claims a shared winner slot by CAS before readying
     * the token, and completions run their waiters in completion order, so the slot holds the
     * input that completed first, even if the other completes before the racer wakes.
     * Ties: inputs already done when the race looks (on entry, or while it registers) are
     * looked at `a` first, so they resolve to `a`, whatever order they completed in.
     *
     * A plain thread with no Io installed can race too: the token is parked on directly.
     *
     * Both waiters are deregistered in a finally block, on every exit path, so a long-lived
     * input that loses many races does not accumulate dead waiters.
     */

    private Races() {}

    /** Races {@code a} against {@code b}; see {@link Io#race} and {@link Io#raceAndJoin}. */
    public static <T> T race(Future<? extends T> a, Future<? extends T> b, boolean joinLoser) {
        Task<? extends T> ta = Task.of(a, "a");
        Task<? extends T> tb = Task.of(b, "b");
        Task<?> me = Context.currentTask();
        if (me != null && (me == ta || me == tb)) {
            throw new IllegalStateException(me + " races its own future: it would cancel itself or never finish");
        }
        try { // the racer's cancellation (or a scope's) in effect: the race does not start
            if (me != null) {
                me.throwIfCancelled();
            } else {
                CancelScope.throwIfPlainThreadCancelled();
            }
        } catch (Cancelled c) {
            throw cancelInputs(ta, tb, joinLoser, c);
        }
        Task<? extends T> winner = firstDone(ta, tb);
        if (winner == null) {
            winner = awaitFirst(ta, tb, me, joinLoser);
        }
        Task<? extends T> loser = winner == ta ? tb : ta;
        loser.cancel();
        if (joinLoser) {
            Io.shield(loser::join);
        }
        return winner.report();
    }

    /** Parks until one input completes; returns the first to complete (ties: the first argument). */
    private static <T> Task<? extends T> awaitFirst(
            Task<? extends T> ta, Task<? extends T> tb, Task<?> me, boolean join) {
        Io io = Context.currentIo() != null || me != null ? Io.current() : CancelScope.plainThreadClock();
        ParkToken token = ParkToken.create();
        AtomicReference<Task<? extends T>> first = new AtomicReference<>();
        WaiterStack.Waiter onA = ta.addWaiter(() -> {
            first.compareAndSet(null, ta);
            wake(io, token);
        });
        WaiterStack.Waiter onB = tb.addWaiter(() -> {
            first.compareAndSet(null, tb);
            wake(io, token);
        });
        try {
            if (onA == null || onB == null) {
                return firstDone(ta, tb); // done while registering: both count as done when looked at
            }
            if (io != null) {
                io.suspendRaw(token);
            } else {
                token.suspend(() -> LockSupport.park(token));
            }
            Task<? extends T> winner = first.get();
            return winner != null ? winner : firstDone(ta, tb);
        } catch (Cancelled c) {
            throw cancelInputs(ta, tb, join, c);
        } finally {
            ta.removeWaiter(onA);
            tb.removeWaiter(onB);
        }
    }

    private static void wake(Io io, ParkToken token) {
        if (io != null) {
            io.ready(token);
        } else {
            token.tryReady();
        }
    }

    private static <T> Task<? extends T> firstDone(Task<? extends T> a, Task<? extends T> b) {
        return a.isDone() ? a : b.isDone() ? b : null;
    }

    private static Cancelled cancelInputs(Task<?> a, Task<?> b, boolean join, Cancelled signal) {
        a.cancel();
        b.cancel();
        if (join) {
            Io.shield(() -> {
                a.join();
                b.join();
            });
        }
        return signal;
    }
}
