package io.weft.blocking;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.Context;
import io.weft.internal.Task;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

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
     * Members. A side thread (started through start(): a producer's thread) is a member for its
     * whole life. A thread inside Io.with(io) (Context.currentIo() == io) becomes a member when it
     * starts a side thread while nobody holds the turn (it keeps the turn; the new thread waits for
     * it), or when it first waits in the Io while side threads are alive. It stops being one when
     * its outermost Io.with(io) ends (leave(), through SideThreads.leaving). With no side thread
     * alive, nothing changes for anyone: a plain single-threaded program never meets a turn.
     *
     * The turn. `holder` is the one member allowed to run, or null. A member runs only while it
     * holds it: a side thread waits for it before its body (awaitTurn), and a member's wait in the
     * Io ends (resume) only once it holds it again. The holder gives it up when it waits (waitStep)
     * or leaves, and then advance() picks the next holder, under the lock, on the giving thread:
     * the first wakeable member in `waiting`, in the order they began to wait; a member is wakeable
     * when its token is ready, its task's cancellation is in effect, or (a side thread) it has not
     * started yet. Because only the holder runs, every ready() that makes a member wakeable, and
     * every wait that appends to `waiting`, happens in the same order on every run: the sequence of
     * holders is a function of the program. Wake-ups from outside the world (a thread that is not a
     * member readies a member's token) happen when they happen; that part is as deterministic as the
     * outside thread.
     *
     * The clock. advance() fires the timers due now, then picks a wakeable member; if there is none
     * and a timer is pending, it jumps the clock to the earliest deadline and fires again. Only the
     * thread giving up the turn (or, with nobody holding it, any thread about to wait) runs
     * advance(), so the clock never jumps while a member runs. Threads that are not members and wait
     * in the Io (`outsiders`) keep the old rule: such a wait may jump the clock, but only when no
     * member holds the turn.
     *
     * Lost wake-ups. A member parks after dropping the lock; whoever makes it the holder unparks it
     * after setting `holder` under the lock, and the member re-reads `holder` under the lock before
     * parking again; LockSupport's permit covers an unpark that lands between the two. A token
     * readied by anyone unparks its owner through ParkToken.tryReady, so a member whose wait ends
     * that way reaches resume() and parks there until advance() hands it the turn.
     *
     * Interrupts. A task member keeps waiting for the turn when interrupted (the flag is restored
     * when it has the turn), as its suspend points do. A plain thread's wait ends on interrupt
     * (ParkToken throws Cancelled), and so does its wait for the turn: it runs on outside the world
     * rather than hang a thread that is being stopped (a test timeout).
     *
     * Costs: one lock acquisition per wait, per resume and per side-thread start; `waiting` holds the
     * members that wait (a handful), scanned linearly.
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

    /** A member waiting for the turn: its thread, and what it waits on (null: not yet started). */
    private record Member(Thread thread, ParkToken token, Task<?> task) {
        boolean wakeable() {
            return token == null || token.isReady() || (task != null && task.isCancellationEffective());
        }
    }

    private final Io io;
    private final Clock clock;
    private final List<Member> waiting = new ArrayList<>();
    private final Set<Thread> sideThreads = Collections.newSetFromMap(new IdentityHashMap<>());
    private Thread holder;
    private int outsiders;

    Turns(Io io, Clock clock) {
        this.io = io;
        this.clock = clock;
    }

    /**
     * Starts {@code body} on a new virtual thread that is a member of this world from the start:
     * it runs when it is given the turn, after the caller (if the caller is in the world and the
     * turn was free, the caller keeps it until it waits in the Io or leaves).
     */
    Thread start(String name, Runnable body) {
        Thread side = Thread.ofVirtual().name(name).unstarted(() -> runSide(body));
        Thread me = Thread.currentThread();
        synchronized (this) {
            sideThreads.add(side);
            if (holder == null && Context.currentIo() == io) {
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
                sideThreads.remove(side);
                dropMember(side);
            }
            throw e;
        }
        return side;
    }

    private void runSide(Runnable body) {
        Thread me = Thread.currentThread();
        awaitTurn(me, true);
        try {
            body.run();
        } finally {
            synchronized (this) {
                sideThreads.remove(me);
                dropMember(me);
            }
        }
    }

    /** The calling thread's outermost {@code Io.with(io)} ended: it leaves the world (side threads stay). */
    void leaving() {
        Thread me = Thread.currentThread();
        synchronized (this) {
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
     * One wait step of a thread whose token is not ready: gives up the turn if it holds it, joins
     * the world if it should, lets the next member run (moving the clock if nobody can), then parks
     * unless it was chosen or its token got ready.
     */
    void waitStep(ParkToken park) {
        Thread me = Thread.currentThread();
        boolean outsider;
        synchronized (this) {
            boolean queued = indexOf(me) >= 0;
            if (holder == me) {
                holder = null;
                if (!queued) {
                    waiting.add(new Member(me, park, Context.currentTask()));
                    queued = true;
                }
            } else if (!queued && !sideThreads.isEmpty() && Context.currentIo() == io) {
                waiting.add(new Member(me, park, Context.currentTask())); // a thread of the world joins at its first wait
                queued = true;
            }
            outsider = !queued;
            if (outsider) {
                outsiders++;
            }
            if (holder == null) {
                advance();
            }
            if (holder == me || park.isReady()) {
                if (outsider) {
                    outsiders--;
                }
                return;
            }
        }
        LockSupport.park(park);
        if (outsider) {
            synchronized (this) {
                outsiders--;
            }
        }
    }

    /** After a member's wait in the Io has ended (ready, cancelled or failed): waits for the turn. */
    void resume() {
        awaitTurn(Thread.currentThread(), false);
    }

    private void awaitTurn(Thread me, boolean sideThread) {
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
                    if (holder == null) {
                        holder = me; // woken from outside the world while nobody held the turn
                        waiting.remove(i);
                        return;
                    }
                    if (interrupted && !sideThread && Context.currentTask() == null) {
                        waiting.remove(i); // a plain thread being stopped does not wait for its turn
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
     * again. Holds the lock.
     */
    private void advance() {
        while (true) {
            int fired = clock.fireDue();
            for (int i = 0; i < waiting.size(); i++) {
                Member next = waiting.get(i);
                if (next.wakeable()) {
                    waiting.remove(i);
                    holder = next.thread();
                    if (holder != Thread.currentThread()) {
                        LockSupport.unpark(holder);
                    }
                    return;
                }
            }
            if (fired > 0 || (waiting.isEmpty() && outsiders == 0)) {
                return; // what fired readied outsiders only (they run), or nobody waits for time
            }
            long deadline = clock.nextDeadline();
            if (deadline == Io.NO_DEADLINE) {
                return;
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
