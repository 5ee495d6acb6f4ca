package io.weft.internal;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;

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
     * Ties: the winner is chosen after waking by looking at `a` first, so two inputs that are
     * both done when looked at resolve to `a`, whatever order they completed in.
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
        if (me != null && me.isCancellationEffective()) {
            throw cancelInputs(ta, tb, joinLoser, new Cancelled(me + " was cancelled before racing"));
        }
        Task<? extends T> winner = firstDone(ta, tb);
        while (winner == null) {
            Io io = Io.current();
            ParkToken token = ParkToken.create();
            Runnable wake = () -> io.ready(token);
            Task.Waiter onA = ta.addWaiter(wake);
            Task.Waiter onB = tb.addWaiter(wake);
            try {
                if (firstDone(ta, tb) == null) {
                    io.suspendRaw(token);
                }
            } catch (Cancelled c) {
                throw cancelInputs(ta, tb, joinLoser, c);
            } finally {
                ta.removeWaiter(onA);
                tb.removeWaiter(onB);
            }
            winner = firstDone(ta, tb);
        }
        Task<? extends T> loser = winner == ta ? tb : ta;
        loser.cancel();
        if (joinLoser) {
            Io.shield(loser::join);
        }
        return winner.report();
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
