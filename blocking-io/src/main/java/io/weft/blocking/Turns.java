package io.weft.blocking;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.CancelScope;
import io.weft.internal.Context;
import io.weft.internal.Task;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The world of a BlockingIo with a virtual clock: the threads that work for it take turns, one
 * running at a time, so that a program with threads beside its own (a {@code Reactive.produce}
 * producer) runs the same way every time, and its virtual clock jumps only when every one of them
 * waits. Thread-safe: every decision is made under this object's lock.
 */
final class Turns {
    /*
     * Implementation notes.
     *
     * Members. The world exists while side threads are alive (started through start(): a
     * producer's thread). A side thread is a member for its whole life. A thread inside
     * Io.with(io) (`bindings` counts each thread's nested bodies; RootTasks reports every entry and
     * exit, also across Ios) is a member while it is in at least one: it becomes one when it
     * starts a side thread while nobody holds the turn (it keeps the turn: the new thread runs only
     * when the caller first waits), when it enters Io.with(io) while side threads are alive (it
     * waits for the turn first), or when it first waits in the Io while side threads are alive (a
     * thread that was already running when the world formed). It stops being one when it leaves
     * its last Io.with(io). When the last side thread ends the world dissolves: nobody holds the
     * turn, every waiting member is woken and goes on as before turns existed, so a program that
     * never starts a side thread, or no longer has one, meets no turn at all.
     *
     * The turn. `holder` is the one member allowed to run, or null. A member runs only while it
     * holds it: a side thread or an entering thread waits for it first (awaitTurn), and a member's
     * wait step returns only once it holds it again (waitAsMember), so even the code between the
     * end of a wait and the caller (ParkToken building a Cancelled) runs in turn. The holder gives
     * it up when it waits, steps aside (Io.yield, poll) or leaves, and advance() then picks the
     * next holder, under the lock, on the giving thread: the first wakeable member in `waiting`, in
     * the order they began to wait; a member is wakeable when its token is ready, its task's
     * cancellation is in effect, or it waits for the turn only (token null). Because only the
     * holder runs, every ready() that makes a member wakeable and every append to `waiting`
     * happens in the same order on every run: the sequence of holders is a function of the
     * program. Wake-ups from outside the world (a thread that is not a member readies a member's
     * token) land when they land; a member so woken while nobody holds the turn takes it.
     *
     * The clock. advance() fires the timers due now, then picks a wakeable member; if there is none
     * and anyone waits, it jumps the clock to the earliest deadline and fires again. It runs only
     * with nobody holding the turn, so the clock never jumps while a member runs. Threads outside
     * the world that wait in the Io (`outsiders`) keep the plain rule (fire, return and look again;
     * jump when nothing fired) but only while nobody holds the turn; otherwise they park, counted,
     * and the next advance() (a member waiting or leaving, or the world dissolving) moves the clock
     * for them too. What fired for an outsider while members wait does not stop the jump to a
     * member's deadline: an outsider is as deterministic as the thread it is.
     *
     * Lost wake-ups. Every decision is made under the lock; a member parks after dropping it and
     * re-reads `holder` under it after every unpark; whoever makes it the holder unparks it after
     * setting `holder`, and LockSupport's permit covers an unpark that lands before the park.
     *
     * Interrupts. A task member keeps waiting for the turn when interrupted (its flag is restored
     * afterwards), as its suspend points do. A plain thread's wait ends on interrupt (ParkToken
     * throws Cancelled), and so does its wait for the turn: it runs on outside the world rather
     * than hang a thread that is being stopped (a test timeout).
     *
     * Costs: one lock acquisition per wait, per resume, per Io.with entry and exit and per
     * side-thread start; `waiting` holds the members that wait (a handful), scanned linearly.
     */

    /** What the turns need from their BlockingIo: its timers and its virtual clock. */
    interface Clock {
        /** Fires the timers due now; returns how many. */
        int fireDue();

        /** The earliest pending deadline, or {@link Io#NO_DEADLINE}. */
        long nextDeadline();

        /** Moves the clock forward to {@code deadlineMs}. */
        void jumpTo(long deadlineMs);
    }

    /**
     * A member waiting for the turn: its thread, and what it waits on (null: it only waits for the
     * turn: a side thread not yet started, a thread entering the world or stepping aside).
     */
    private record Member(Thread thread, ParkToken token, Task<?> task, BooleanSupplier plainScopes) {
        Member(Thread thread, ParkToken token, Task<?> task) {
            // taken on the member's own thread: a task started inside its plain scopes runs inside them
            this(thread, token, task, token != null ? CancelScope.plainThreadProbe() : null);
        }

        /** Whether it can run: its token is ready, or a cancellation (its task's, its plain thread's scopes) stops it. */
        boolean wakeable() {
            if (token == null || token.isReady()) {
                return true;
            }
            return task != null
                    ? task.isCancellationEffective(plainScopes)
                    : plainScopes != null && plainScopes.getAsBoolean();
        }
    }

    private final List<Member> waiting = new ArrayList<>();
    private final Set<Thread> sideThreads = Collections.newSetFromMap(new IdentityHashMap<>());
    /** How many Io.with(io) bodies each thread is inside (they nest, also across Ios). */
    private final Map<Thread, Integer> bindings = new IdentityHashMap<>();

    private final Clock clock;
    private Thread holder;
    private int outsiders;

    Turns(Clock clock) {
        this.clock = clock;
    }

    /**
     * Starts {@code body} on a new virtual thread that is a member of this world from the start:
     * it runs when it is given the turn, after the caller (if the caller is inside
     * {@code Io.with(io)} and the turn was free, the caller keeps it until it waits or leaves).
     */
    Thread start(String name, Runnable body) {
        Thread side = Thread.ofVirtual().name(name).unstarted(() -> runSide(body));
        Thread me = Thread.currentThread();
        synchronized (this) {
            sideThreads.add(side);
            if (holder == null && bindings.containsKey(me)) {
                holder = me;
            }
            if (holder == null) {
                holder = side;
            } else {
                waiting.add(new Member(side, null, null));
            }
        }
        try {
            side.start();
        } catch (RuntimeException | Error e) {
            synchronized (this) {
                sideEnded(side);
            }
            throw e;
        }
        return side;
    }

    private void runSide(Runnable body) {
        Thread me = Thread.currentThread();
        awaitTurn(me);
        try {
            body.run();
        } finally {
            synchronized (this) {
                sideEnded(me);
            }
        }
    }

    /**
     * A side thread ended (or never started). With side threads left, it passes the turn on; with
     * none, the world dissolves: nobody holds the turn and every member goes on as before turns
     * existed (single-threaded programs never meet a turn, and a thread left holding one could
     * block a plain thread that has nothing to do with it). Holds the lock.
     */
    private void sideEnded(Thread side) {
        sideThreads.remove(side);
        if (!sideThreads.isEmpty()) {
            dropMember(side);
            return;
        }
        holder = null;
        for (Member m : waiting) {
            LockSupport.unpark(m.thread());
        }
        waiting.clear();
        if (outsiders > 0) {
            advance(); // nobody else would move the clock for the threads outside the world
        }
    }

    /** The calling thread enters an {@code Io.with(io)} body; joins the world if side threads are alive. */
    void entering() {
        Thread me = Thread.currentThread();
        synchronized (this) {
            int depth = bindings.merge(me, 1, Integer::sum);
            if (depth > 1 || sideThreads.isEmpty() || sideThreads.contains(me) || holder == me || indexOf(me) >= 0) {
                return;
            }
            waiting.add(new Member(me, null, null)); // runs when its turn comes, not alongside the holder
            if (holder == null) {
                advance();
            }
        }
        awaitTurn(me);
    }

    /** The calling thread left an {@code Io.with(io)} body; out of the last one, it leaves the world. */
    void leaving() {
        Thread me = Thread.currentThread();
        synchronized (this) {
            Integer depth = bindings.get(me);
            if (depth == null) {
                return;
            }
            if (depth > 1) {
                bindings.put(me, depth - 1);
                return;
            }
            bindings.remove(me);
            if (!sideThreads.contains(me)) {
                dropMember(me);
            }
        }
    }

    /** Forgets {@code thread} as a member; if it held the turn, passes it on. Holds the lock. */
    private void dropMember(Thread thread) {
        removeWaiting(thread);
        if (holder == thread) {
            holder = null;
            advance();
        }
    }

    /**
     * One wait step of a thread whose token is not ready. A member gives up the turn (or joins, if
     * it is inside {@code Io.with(io)} while side threads are alive), lets the next member run
     * (moving the clock if nobody can), and returns only once it holds the turn again (or the
     * world dissolved, or a plain thread is interrupted). A thread outside the world keeps the
     * plain rule: it may move the clock when nobody holds the turn.
     */
    void waitStep(ParkToken park) {
        Thread me = Thread.currentThread();
        boolean member;
        synchronized (this) {
            member = indexOf(me) >= 0;
            if (holder == me) {
                holder = null;
                if (!member) {
                    waiting.add(new Member(me, park, Context.currentTask()));
                    member = true;
                }
            } else if (!member && !sideThreads.isEmpty() && bindings.containsKey(me)) {
                waiting.add(new Member(me, park, Context.currentTask())); // was running when the world formed
                member = true;
            }
            if (member) {
                if (holder == null) {
                    advance();
                }
                if (holder == me) {
                    return;
                }
            }
        }
        if (member) {
            waitAsMember(me, park);
        } else {
            waitAsOutsider(park);
        }
    }

    private void waitAsMember(Thread me, ParkToken park) {
        boolean interrupted = false;
        try {
            while (true) {
                LockSupport.park(park);
                interrupted |= Thread.interrupted();
                synchronized (this) {
                    int i = indexOf(me);
                    if (holder == me || i < 0) {
                        return; // my turn; or the world dissolved and I go on as before
                    }
                    if (takeFreeTurnOrLeave(me, i, waiting.get(i).wakeable(), interrupted)) {
                        return;
                    }
                }
            }
        } finally {
            if (interrupted) {
                me.interrupt(); // ParkToken decides what an interrupt means for this wait
            }
        }
    }

    /**
     * Under the monitor, for waiting member {@code me} at index {@code i}: takes the turn if
     * nobody holds it and {@code canRun} (woken from outside the world), or leaves the waiting
     * list if it is a plain thread being stopped (it does not wait for its turn). Returns whether
     * {@code me} goes on.
     */
    private boolean takeFreeTurnOrLeave(Thread me, int i, boolean canRun, boolean interrupted) {
        if (holder == null && canRun) {
            holder = me;
            waiting.remove(i);
            return true;
        }
        if (interrupted && Context.currentTask() == null && !sideThreads.contains(me)) {
            waiting.remove(i);
            return true;
        }
        return false;
    }

    private void waitAsOutsider(ParkToken park) {
        boolean parkNow = false;
        synchronized (this) {
            outsiders++;
            try {
                // after firing timers, look again instead of parking (the fired ones may be mine,
                // or the next deadline may be): the plain rule's "fire, return, loop"
                parkNow = !park.isReady() && (holder != null || advance() == 0) && !park.isReady();
            } finally {
                if (!parkNow) {
                    outsiders--;
                }
            }
        }
        if (parkNow) {
            try {
                LockSupport.park(park);
            } finally {
                synchronized (this) {
                    outsiders--;
                }
            }
        }
    }

    /** After a wait in the Io ended: a member holds the turn before it goes on. */
    void resume() {
        awaitTurn(Thread.currentThread());
    }

    /**
     * If the calling thread holds the turn, steps aside ({@code Io.yield}): the members that can
     * run go first, then it continues. Returns whether it held the turn.
     */
    boolean yieldTurn() {
        Thread me = Thread.currentThread();
        synchronized (this) {
            if (holder != me) {
                return false;
            }
            holder = null;
            waiting.add(new Member(me, null, null));
            advance();
            if (holder == me) {
                return true;
            }
        }
        awaitTurn(me);
        return true;
    }

    private void awaitTurn(Thread me) {
        boolean interrupted = false;
        try {
            while (true) {
                synchronized (this) {
                    if (holder == me) {
                        return;
                    }
                    int i = indexOf(me);
                    if (i < 0) {
                        return; // not a member: an outsider runs as it likes
                    }
                    if (takeFreeTurnOrLeave(me, i, true, interrupted)) {
                        return;
                    }
                }
                LockSupport.park(this);
                interrupted |= Thread.interrupted();
            }
        } finally {
            if (interrupted) {
                me.interrupt();
            }
        }
    }

    /**
     * With nobody holding the turn: fires what is due and hands the turn to the first wakeable
     * member; if there is none and someone waits, jumps the clock to the next deadline and tries
     * again. Returns how many timers it fired. Holds the lock.
     */
    private int advance() {
        int firedTotal = 0;
        while (true) {
            int fired = clock.fireDue();
            firedTotal += fired;
            for (int i = 0; i < waiting.size(); i++) {
                Member next = waiting.get(i);
                if (next.wakeable()) {
                    waiting.remove(i);
                    holder = next.thread();
                    if (holder != Thread.currentThread()) {
                        LockSupport.unpark(holder);
                    }
                    return firedTotal;
                }
            }
            if (waiting.isEmpty() && (fired > 0 || outsiders == 0)) {
                return firedTotal; // what fired readied outsiders only (they run), or nobody waits for time
            }
            long deadline = clock.nextDeadline();
            if (deadline == Io.NO_DEADLINE) {
                return firedTotal;
            }
            clock.jumpTo(deadline);
        }
    }

    private int indexOf(Thread thread) {
        for (int i = 0; i < waiting.size(); i++) {
            if (waiting.get(i).thread() == thread) {
                return i;
            }
        }
        return -1;
    }

    private void removeWaiting(Thread thread) {
        int i = indexOf(thread);
        if (i >= 0) {
            waiting.remove(i);
        }
    }

    @Override
    public synchronized String toString() {
        return "Turns[holder=" + (holder == null ? "none" : holder.getName()) + ", waiting=" + waiting.size()
                + ", side threads=" + sideThreads.size() + "]";
    }
}
