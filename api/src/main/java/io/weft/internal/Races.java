package io.weft.internal;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/** {@link Io#race} and {@link Io#raceAndJoin}: two inputs, one waiter, the loser cancelled. */
public final class Races {
    /*
     * Implementation notes.
     *
     * One ParkToken serves both inputs: each input gets a waiter (an Entrant, its own action)
     * that readies it, so whichever completes first wakes the racer. Registration happens before
     * the re-check of both inputs, so a completion between the first look and the park is never
     * missed (the waiter either runs, or was refused because the input was already done).
     *
     * First to complete: each waiter action claims a shared winner slot (a field of a's entrant)
     * by CAS before readying the token, and completions run their waiters in completion order,
     * so the slot holds the input that completed first, even if the other completes before the
     * racer wakes.
     * Ties: inputs already done when the race looks (on entry, or while it registers) are
     * looked at `a` first, so they resolve to `a`, whatever order they completed in.
     *
     * A plain thread with no Io installed can race too: the token is parked on directly.
     *
     * Inputs that run the racer in place: under an inline Io, or join helping, the tasks that
     * started the racer on its thread (its inline ancestors) are suspended below it until it ends.
     * Before 2026-12-03 a race of two of them parked for good. So did raceAndJoin with one of them
     * while its other input was pending; once the other input won, the join of the ancestor threw
     * from Awaiting's check, after the race had cancelled it. Both now fail with
     * IllegalStateException before anything is cancelled, and before the racer's own cancellation
     * is looked at (as racing its own future does): the call is a mistake whether or not the racer
     * was cancelled. The cost: one read of the racer's inline parent, and for a racer that has one,
     * one walk of its chain of them (the tasks below it on this stack). Only that stack is looked
     * at: a deadlock through tasks on other fibers (each input awaiting the racer from a fiber of
     * its own) is not detected, since a racer records no await link (one link cannot name two
     * inputs).
     *
     * raceAndJoin's wait for the inputs is shielded: for a task, its shield; for a plain thread,
     * whose waits end on interrupt whatever a shield says, Awaiting.joinUninterruptibly waits
     * again after an interrupt and gives it back after. Before, a plain thread interrupted while
     * it joined the loser (or, cancelled by an interrupt, the inputs) left with the loser still
     * unwinding, and with Cancelled in place of the winner's value.
     *
     * Both waiters are deregistered in a finally block, on every exit path, so a long-lived
     * input that loses many races does not accumulate dead waiters.
     *
     * Per race that parks: 3 allocations, the token and the two entrants (4 on a plain thread
     * with no Io: the park's lambda). Before the entrants were their own actions there were 6
     * (two waiter nodes, two lambdas, an AtomicReference), and Futures.race allocated 5.0-5.9 KB
     * more per 100 races (BENCHMARKS.md, twenty-second session). 2 CAS to register, 1 CAS to
     * claim the slot per input that completes, the ready.
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
        if (me != null && me.inlineParent() != null) { // before its cancellation: see the notes
            checkNoInputIsInlineAncestor(ta, tb, me, joinLoser);
        }
        try { // the racer's cancellation (or a scope's) in effect: the race does not start
            if (me != null) {
                me.throwIfCancelled();
            } else {
                CancelScope.throwIfPlainThreadCancelled();
            }
        } catch (Cancelled c) {
            throw cancelInputs(ta, tb, joinLoser, me, c);
        }
        Task<? extends T> winner = firstDone(ta, tb);
        if (winner == null) {
            winner = awaitFirst(ta, tb, me, joinLoser);
        }
        Task<? extends T> loser = winner == ta ? tb : ta;
        loser.cancel();
        if (joinLoser) {
            Awaiting.joinUninterruptibly(loser, me); // shielded; on a plain thread, through interrupts too
        }
        return winner.report();
    }

    /**
     * Fails a race that could never end: under an inline Io, or join helping, the tasks that started
     * {@code me} on this thread (its inline ancestors) are suspended below it until it ends, so a
     * race of two of them has no input that can complete first, and raceAndJoin with one of them
     * could never join it as its loser. One of them and another input is a race the other input
     * wins. An inline ancestor is running, never done or unstarted: the walk alone decides.
     */
    private static void checkNoInputIsInlineAncestor(Task<?> a, Task<?> b, Task<?> me, boolean joinLoser) {
        boolean aIsAncestor = false;
        boolean bIsAncestor = false;
        for (Task<?> t = me.inlineParent(); t != null; t = t.inlineParent()) {
            aIsAncestor |= t == a;
            bIsAncestor |= t == b;
        }
        if (aIsAncestor && bIsAncestor) {
            throw new IllegalStateException(me + " races " + a + " and " + b + ", which both run it in place on the"
                    + " same thread (inline, or awaiting it before it started): neither can finish before it does");
        }
        if (joinLoser && (aIsAncestor || bIsAncestor)) {
            throw new IllegalStateException(me + " races and joins " + (aIsAncestor ? a : b) + ", which runs it in"
                    + " place on the same thread (inline, or awaiting it before it started): it cannot finish before"
                    + " it does, so it could never be joined as the loser");
        }
    }

    /** Parks until one input completes; returns the first to complete (ties: the first argument). */
    private static <T> Task<? extends T> awaitFirst(
            Task<? extends T> ta, Task<? extends T> tb, Task<?> me, boolean join) {
        Io io = Context.currentIo() != null || me != null ? Io.current() : CancelScope.plainThreadClock();
        ParkToken token = ParkToken.create();
        Entrant<T> entrantA = new Entrant<>(ta, io, token, null);
        WaiterStack.Waiter onA = ta.push(entrantA);
        WaiterStack.Waiter onB = tb.push(new Entrant<>(tb, io, token, entrantA));
        try {
            if (onA == null || onB == null) {
                return firstDone(ta, tb); // done while registering: both count as done when looked at
            }
            if (io != null) {
                io.suspendRaw(token);
            } else {
                token.suspend(() -> LockSupport.park(token));
            }
            Task<? extends T> winner = entrantA.winner;
            return winner != null ? winner : firstDone(ta, tb);
        } catch (Cancelled c) {
            throw cancelInputs(ta, tb, join, me, c);
        } finally {
            ta.removeWaiter(onA);
            tb.removeWaiter(onB);
        }
    }

    /**
     * A race's waiter on one input, its own action: it claims the winner slot (a field of a's
     * entrant, shared by both) for its input, then readies the racer.
     */
    private static final class Entrant<T> extends WaiterStack.SelfWaiter {
        private static final VarHandle WINNER;

        static {
            try {
                WINNER = MethodHandles.lookup().findVarHandle(Entrant.class, "winner", Task.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final Task<? extends T> input;
        private final Io io;
        private final ParkToken token;
        /** The entrant whose {@link #winner} both claim: a's (this one, for a's). */
        private final Entrant<T> slot;
        /** The first input to complete, or null; claimed by CAS, used on a's entrant only. */
        private volatile Task<? extends T> winner;

        Entrant(Task<? extends T> input, Io io, ParkToken token, Entrant<T> slot) {
            this.input = input;
            this.io = io;
            this.token = token;
            this.slot = slot != null ? slot : this;
        }

        @Override
        public void run() {
            WINNER.compareAndSet(slot, (Task<?>) null, (Task<?>) input);
            wake(io, token);
        }

        @Override
        ParkToken token() {
            return token;
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

    private static Cancelled cancelInputs(Task<?> a, Task<?> b, boolean join, Task<?> me, Cancelled signal) {
        a.cancel();
        b.cancel();
        if (join) {
            Awaiting.joinUninterruptibly(a, me);
            Awaiting.joinUninterruptibly(b, me);
        }
        return signal;
    }
}
