package io.weft.internal;

import io.weft.Io;
import io.weft.ParkToken;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The awaiters of one task: actions run once when it completes. {@link Task} extends it, so the
 * stack costs the task one field, not one object. Thread-safe.
 */
abstract class WaiterStack {
    /*
     * Implementation notes.
     *
     * A Treiber stack of Waiter nodes. runWaiters() (the completing thread, once, after the
     * task's state says done) reads the head: if nobody waits it returns (no atomic write: the
     * common case of a task nobody awaited in time); otherwise it swaps in the DONE sentinel and
     * runs every live action, so a waiter pushed after that swap is refused (the pusher reports
     * at once).
     *
     * A push that lands after the completer read an empty stack would never run: so a pusher
     * re-reads the task's state after its CAS, and if the task is done it takes its action back
     * (getAndSet to null) and reports "already done". The completer takes each action with the
     * same getAndSet, so exactly one of them gets it. Why one side always sees the other: the
     * completer writes the done state, then reads the head; the pusher CASes the head, then reads
     * the state; all four are volatile accesses (sequentially consistent), so either the
     * completer's read sees the node, or the pusher's read sees done, or both (then the
     * getAndSet decides). A node taken back stays linked until a removal unlinks it (the pusher
     * removes it at once).
     *
     * Deregistration (race losers, timed-out awaits) nulls the node's action and unlinks dead
     * nodes: at the head by CAS, inside the stack by plain writes. Concurrent unlinks can only
     * re-link a dead node, never drop a live one: every write skips exactly one dead node. A
     * stale action that still runs is harmless: it readies a one-shot ParkToken nobody parks on.
     *
     * A wake-up that throws (the SelfWaiters: a parked await's Wakeup, a race's Entrant). Its
     * action was taken by the completer's getAndSet, so nobody else will ever run it: reported and
     * dropped as another action's failure is, it would leave its awaiter parked for good (a parked
     * await waits for its token, not for the task). What can throw there is the JVM's own: an
     * OutOfMemoryError (a deoptimization that must reallocate objects it had scalar-replaced) or
     * a StackOverflowError, before the token's CAS or between the CAS and the unpark. So
     * runReporting runs a SelfWaiter that threw again (SelfWaiter.wakeAgain: its action, which is
     * idempotent, then, if the token was already ready before it, an unpark of the token's owner,
     * since a second tryReady after a won CAS unparks nobody), up to WAKE_ATTEMPTS times, and
     * reports only if every try threw. That unpark is a stray wake-up at worst (the token may
     * have been readied by another path), which every park loop of Weft re-checks; it is skipped
     * when the action's own tryReady does the unpark, since with the heap full a stray
     * submission costs a rescue slot (FiberIo's Injector). Cold: only after a throw. Not covered: a throw inside the JDK's unpark
     * after it set the thread's park permit (a second unpark then does nothing); the JDK retries
     * its own submission on OutOfMemoryError, and the window holds no allocation of its own.
     * Tested with an Io whose ready throws once before readying (TaskWaitersTest); the window
     * after the CAS has no test, since only the JVM can throw there.
     *
     * Linked when the class loads. In interpreted code, the first run of a VarHandle call site
     * links it, which allocates; until it succeeds, every run tries again. runWaiters' swap and
     * takes run only when someone waits, and with join helping a program's awaits may find their
     * tasks done or run them in place until late: in OutOfMemoryProbe (2026-12-02, a
     * scratch build recording every throw) the first completion with a waiter came with the
     * heap full, its swap threw, and the task was done with its waiter never run (the awaiter,
     * main, parked for good; the runner's settle finds the task done and can do nothing): 2 of
     * about 100 runs. So Task, the one subclass, runs every VarHandle call site of push,
     * removeWaiter and runWaiters once when it loads, on tasks of its own (Task.linkCallSites),
     * best effort (a throw there is ignored: a class whose initializer threw is unusable for
     * good), and ParkToken links tryReady's CAS and loads Wake the same way. Not on a private
     * subclass here, and not through complete(), as two first versions did: each made a parked
     * task of Memory.parked larger (a subclass 1,217-1,288 bytes, complete() 1,202-1,237, against
     * 1,123-1,205 before, alternating runs of 3 forks; the JIT compiles differently, and the
     * parked frames follow). Written as it is: 1,161 and 1,171 against 1,123 and 1,193.
     *
     * Per operation: push = 1 allocation (the node; a parked await's node and a race's are their
     * own actions, SelfWaiter, so no lambda) + 1 CAS + 1 volatile read; removal = 1 volatile
     * write + a CAS per dead head node; completion with nobody waiting = 1 volatile read, with
     * waiters = 1 getAndSet + 1 getAndSet per waiter + the actions.
     */

    private static final VarHandle WAITERS;
    private static final VarHandle ACTION;
    /** Marks the stack of a completed task. */
    private static final Waiter DONE = new Waiter(null);

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            WAITERS = lookup.findVarHandle(WaiterStack.class, "waiters", Waiter.class);
            ACTION = lookup.findVarHandle(Waiter.class, "action", Runnable.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One registered awaiter: an action run once when the task completes. */
    static class Waiter {
        volatile Runnable action;
        Waiter next;

        Waiter(Runnable action) {
            if (action != null) {
                ACTION.set(this, action); // a plain store: the node is published by push's CAS
            }
        }
    }

    /**
     * A waiter that is its own action, so a registration allocates the node alone (no lambda):
     * the parked await's {@link Wakeup}, a race's entrants ({@link Races}).
     */
    abstract static class SelfWaiter extends Waiter implements Runnable {
        SelfWaiter() {
            super(null);
            ACTION.set(this, this); // a plain store: the node is published by push's CAS
        }

        /** The token whose owner this waiter wakes. */
        abstract ParkToken token();

        /**
         * After {@link #run()} threw: runs it again and unparks the token's owner, whatever the
         * token's state (see the notes, "A wake-up that throws"). Returns whether it went through.
         */
        final boolean wakeAgain() {
            for (int attempt = 0; attempt < WAKE_ATTEMPTS; attempt++) {
                try {
                    boolean readied = token().isReady(); // then the throw came after the CAS
                    run();
                    if (readied) {
                        Wake.unpark(token().owner());
                    }
                    return true;
                } catch (RuntimeException | Error again) {
                    // the JVM's own failure, perhaps passing: try again
                }
            }
            return false;
        }
    }

    /** How many more times a wake-up that threw is tried (see the notes, "A wake-up that throws"). */
    static final int WAKE_ATTEMPTS = 3;

    /** The waiter of a parked await: the node is its own action (no lambda per await). */
    static final class Wakeup extends SelfWaiter {
        private final Io io;
        private final ParkToken token;

        Wakeup(Io io, ParkToken token) {
            this.io = io;
            this.token = token;
        }

        @Override
        public void run() {
            if (io != null) {
                io.ready(token);
            } else {
                token.tryReady();
            }
        }

        @Override
        ParkToken token() {
            return token;
        }
    }

    /** The stack, or DONE. Pushed by awaiters, swapped by the completing thread. */
    private volatile Waiter waiters;

    WaiterStack() {}

    /** Pushes a waiter; returns null (and does not register) if the task is already done. */
    Waiter addWaiter(Runnable action) {
        return push(new Waiter(action));
    }

    /** Whether the task is done; the completer makes it so before {@link #runWaiters()}. */
    abstract boolean isDone();

    /** Pushes {@code node}; returns it, or null (not registered) if the task is already done. */
    Waiter push(Waiter node) {
        while (true) {
            Waiter head = waiters;
            if (head == DONE) {
                return null;
            }
            node.next = head;
            if (WAITERS.compareAndSet(this, head, node)) {
                break;
            }
        }
        if (isDone() && ACTION.getAndSet(node, (Runnable) null) != null) {
            removeWaiter(node); // the completer may have read the stack before this push: not registered
            return null;
        }
        return node;
    }

    /** Deregisters {@code node} (null is ignored) and unlinks dead nodes. */
    void removeWaiter(Waiter node) {
        if (node == null) {
            return;
        }
        node.action = null;
        Waiter head = waiters;
        while (head != null && head != DONE && head.action == null) {
            if (WAITERS.compareAndSet(this, head, head.next)) {
                head = head.next;
            } else {
                head = waiters;
            }
        }
        if (head == null || head == DONE) {
            return;
        }
        for (Waiter p = head, q = p.next; q != null; q = p.next) {
            if (q.action == null) {
                p.next = q.next;
            } else {
                p = q;
            }
        }
    }

    /**
     * Closes the stack and runs every live waiter once; the completing thread calls this once. An
     * action that throws (a broken Io's ready, a callback of a toCompletableFuture dependant) does
     * not keep the others asleep and does not escape: it goes to the thread's uncaught-exception
     * handler, and the rest run.
     */
    void runWaiters() {
        if (waiters == null) {
            return; // nobody waits; a later push sees the task done and takes its action back
        }
        Waiter w = (Waiter) WAITERS.getAndSet(this, DONE);
        for (; w != null && w != DONE; w = w.next) {
            Runnable action = (Runnable) ACTION.getAndSet(w, (Runnable) null);
            if (action != null) {
                runReporting(action);
            }
        }
    }

    /**
     * Runs a waiter's action; an exception it throws goes to the current thread's
     * uncaught-exception handler instead of escaping (see {@link #runWaiters()}), unless the
     * action is a wake-up that went through when tried again (see the notes, "A wake-up that
     * throws").
     */
    static void runReporting(Runnable action) {
        try {
            action.run();
        } catch (RuntimeException | Error e) {
            if (action instanceof SelfWaiter wakeUp && wakeUp.wakeAgain()) {
                return;
            }
            Thread current = Thread.currentThread();
            try {
                current.getUncaughtExceptionHandler().uncaughtException(current, e);
            } catch (Throwable ignored) {
                // as the JVM does for a thread's handler: thrown from here (an OutOfMemoryError
                // while the handler prints), it would leave the remaining waiters asleep
            }
        }
    }

    /** Counts live waiters; for diagnostics. */
    int waiterCount() {
        int n = 0;
        Waiter w = waiters;
        for (; w != null && w != DONE; w = w.next) {
            if (w.action != null) {
                n++;
            }
        }
        return n;
    }
}
