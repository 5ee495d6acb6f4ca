package io.weft.internal;

import io.weft.Cancelled;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimerHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * How a caller waits for a {@link Task}: the await loop, join helping (running an unstarted task
 * in place), and the checks that turn a wait that could never end into an exception.
 */
final class Awaiting {
    /*
     * Implementation notes.
     *
     * The loop: a fresh ParkToken per round, a Wakeup waiter on the awaited task (readies the
     * token through the awaiter's Io), an optional timer, then the Io's suspendRaw; the waiter and
     * timer are removed whatever ends the round. The token is one-shot, so a stale wake-up from
     * an earlier round never ends a later one.
     *
     * Await cycles: an awaiting task records `awaiting` (volatile, in the task's Extras: reached
     * through the volatile `extras`, installed by CAS, so the reads below see it as a plain
     * volatile field), marks the awaited task AWAITED
     * (an atomic OR on its state word, skipped if already set), then, if it is itself AWAITED,
     * walks the chain from the awaited task; if it reaches itself, it throws instead of hanging.
     * A task nobody awaits cannot be on a cycle, so a chain built link by link (each new task
     * awaiting the last) costs one hop per await instead of a walk of the whole chain (10^5 links:
     * 10.3 s -> see the commit).
     *
     * Tasks closing a cycle at once: in the total order of their marks, the task whose mark comes
     * last reads its own AWAITED bit after its predecessor's mark (the bit is sticky), so it
     * walks, and every `awaiting` on the cycle was written before its writer's mark: it sees the
     * cycle.
     *
     * A task run in place waits for nothing less: the task below it on the stack (its awaiter
     * under join helping, its spawner under an inline Io) cannot go on before it ends. The help
     * records no await link and no AWAITED mark (the help path stays as cheap as the notes below
     * say), so the walk steps from a task that awaits nothing to the task it runs in place
     * (`helping`, set by startAbove before the helped body runs), and a task run in place walks
     * whenever it parks in an untimed await, AWAITED or not. Without both, P running X in place,
     * X awaiting Y and Y awaiting P hung, where the same tasks with X started on a fiber of its
     * own failed with "await cycle" (TasksBeforeThreadsTest.anAwaitCycleThroughATaskRunInPlace...).
     * Closing at once: X's `awaiting` and mark come after P's `helping` on the same thread, so
     * the argument above holds with P's link in place of a mark. The cost: a task run in place
     * that parks walks the awaited task's chain (up to MAX_AWAIT_CHAIN hops), where an unmarked
     * task on a fiber of its own takes one hop. The help only parks at its depth bound, or on a
     * task already running elsewhere, and the walk follows the awaited task's links, not the
     * helper's stack, so a chain built link by link still takes one hop per await unless each new
     * link runs in place and awaits a long chain already parked.
     *
     * A platform thread with no Io installed and no cancel scope open (the caller of
     * Io.with(io).call or FiberIo.call from main, a plain thread awaiting a future) yields for up
     * to 50 us while the task is not done and the thread not interrupted, then parks; untimed
     * awaits only. On the 2-core test VM such a caller, asleep in the kernel, ran 12-15 us after
     * the root task that woke it ended, and 2-3 us after when it had kept looking (SplitProbe
     * awaitChain). JMH (fiber, 3 forks, two runs each, before -> after, us/op): await chain 44.6
     * and 40.5 -> 22.7 and 22.7, spawn_many_local 452 and 377 -> 291 and 291; the others level
     * within the noise (BENCHMARKS.md, "2026-11-27, fourth session"). The cost: up to 50 us of a
     * core per await that lasts longer, yielded to any other runnable thread. A task's await never
     * spins (it parks its fiber, which frees the carrier), nor does a virtual thread's (waking it
     * is no kernel call), nor a plain thread's inside a cancel scope (a cancel must take effect at
     * once, and it arrives as an unpark the spin would not see).
     *
     * Per await that parks: ParkToken + Wakeup (2 allocations), 1 CAS to push, the park, the
     * removal. An await of a done task: one volatile read. An await of an unstarted task of a
     * helping Io: one CAS (the claim), two volatile writes (the awaiter's `helping` link, set and
     * cleared by startAbove/endAbove), the awaiter's state and extras read at the claim (the helped
     * task's stack bits: Task.stackBits), three reads of the awaiter's state after the writes (an
     * interrupt of a cancel held back while the helped task runs: CancelInterrupts.hold and
     * reclaim; a cancel already requested: Task.startAbove), the
     * awaiter's interrupt status set aside and given back (Task.runHelped), a release store
     * (the helped task's thread), the registry lookup
     * (HelpsAwaiters.of), what the Io sets aside of the thread (FiberIo: a dozen field reads, no
     * allocation but a named task's thread name), the Io's count of the end (FiberIo: a pin, a
     * carrier lookup, two plain counters), one context lookup (the awaiter's, handed on to the
     * helped task), no clock read, and the helped task's own run; no park. There is no closure:
     * the Io's helper gets the task, the awaiter and the slot, and calls Task.runHelped.
     */

    /** How deep tasks may run in place inside one another on one stack. */
    static final int MAX_HELP_DEPTH = 32;

    private static final int MAX_AWAIT_CHAIN = 10_000;
    /** How long a plain thread keeps looking before it blocks in an untimed await (see the notes). */
    static final long PLAIN_THREAD_SPIN_NANOS = 50_000;

    private Awaiting() {}

    /**
     * Parks the caller until {@code awaited} is done or, for a timed await, {@code deadlineMs}
     * passes on {@code clock}'s clock (a deadline of NO_DEADLINE never passes: a timeout so long it
     * saturates). Returns whether the task is done. Only an untimed await is checked for awaiting
     * itself or closing a cycle, and only it helps: a timed one ends by itself, however far away its
     * deadline.
     */
    static boolean awaitDone(Task<?> awaited, long deadlineMs, Io clock, boolean timed) {
        if (awaited.isDone()) {
            return true;
        }
        Context.Slot slot = Context.slot();
        Task<?> me = Context.taskIn(slot);
        boolean forever = !timed;
        if (forever && me != null) {
            if (me == awaited) {
                throw new IllegalStateException(awaited + " awaits its own future: it would never finish");
            }
            if (!awaited.isUnstarted()) { // a task not started yet is on no stack: no walk (a chain of helps is deep)
                checkNotInlineAncestor(awaited, me);
            }
        }
        if (forever && me != null && tryHelp(awaited, me, slot)) {
            return true;
        }
        // A plain thread with no Io installed still waits: a ParkToken parks any thread; through the
        // clock of a deadline scope it owns, if any, so an inline Io's timer for it fires
        Io io = clock != null
                ? clock
                : Context.currentIo() != null || me != null ? Io.current() : CancelScope.plainThreadClock();
        if (me != null && forever) { // a timed await ends by itself: it closes no deadlock
            me.setAwaiting(awaited);
            awaited.markAwaitedByTask();
            if (me.isAwaitedByTask() || me.inlineParent() != null) { // run in place: its runner awaits it
                checkNoAwaitCycle(awaited, me);
            }
        }
        if (io == null && !timed && !Thread.currentThread().isVirtual() && !CancelScope.plainThreadHasScopes()) {
            // a platform thread with no Io and no scope (a caller entering Weft, say); waking a
            // virtual thread is no kernel call, and a scope's cancel arrives as an unpark
            spinBriefly(awaited);
        }
        // A timed await ends when its timer fires, by the Io's own rule (a real clock's reading must
        // pass the deadline): never by comparing nowMs() with it, which a truncated reading reaches
        // up to a millisecond early. A timeout of zero or less never gets here (Task.await).
        boolean due = false;
        try {
            while (!awaited.isDone()) {
                if (due) {
                    return false;
                }
                ParkToken token = ParkToken.create(awaited);
                WaiterStack.Waiter node = awaited.push(new WaiterStack.Wakeup(io, token));
                if (node == null) {
                    break;
                }
                TimerHandle timer = deadlineMs != Io.NO_DEADLINE ? io.armTimer(deadlineMs, token) : null;
                try {
                    if (io != null) {
                        io.suspendRaw(token);
                    } else {
                        token.suspend(() -> LockSupport.park(token));
                    }
                } finally {
                    awaited.removeWaiter(node);
                    due = timer != null && !timer.cancel(); // it fired
                }
            }
            return true;
        } finally {
            if (me != null && forever) {
                me.setAwaiting(null);
            }
        }
    }

    /**
     * Yields the calling platform thread while {@code awaited} is not done and the thread is not
     * interrupted, for at most PLAIN_THREAD_SPIN_NANOS: a task that ends within that time needs no
     * unpark to wake its awaiter.
     */
    private static void spinBriefly(Task<?> awaited) {
        Thread self = Thread.currentThread();
        // A CPU budget, not program time: no Io's clock is involved (and a virtual one would not move)
        long until = System.nanoTime() + PLAIN_THREAD_SPIN_NANOS;
        while (!awaited.isDone() && !self.isInterrupted() && System.nanoTime() - until < 0) {
            Thread.yield(); // gives the core to any other runnable thread (the workers, on a small machine)
        }
    }

    /**
     * Join helping: if {@code awaited} has not started and belongs to the awaiter's Io, and that Io
     * {@linkplain HelpsAwaiters helps awaiters}, claims it and runs it here, on the awaiter's stack,
     * under its own binding (current task, cancellation), then returns true (it is done). While
     * it runs, a cancellation of the awaiter wakes the helped task if it is parked (the
     * awaiter's {@code helping} link leads the canceller to it) and is in effect at the helped
     * task's suspend points: it unwinds as cancelled, then the awaiter's await reports that.
     */
    private static boolean tryHelp(Task<?> awaited, Task<?> me, Context.Slot slot) {
        Io io = awaited.io();
        if (io == null || io != me.io() || me.inlineDepth() >= MAX_HELP_DEPTH || !awaited.isUnstarted()) {
            return false;
        }
        HelpsAwaiters inPlace = HelpsAwaiters.of(io);
        if (inPlace == null) {
            return false;
        }
        me.throwIfCancelled(); // an await is a suspend point, helped or not
        if (!awaited.claimForHelper(me)) {
            return false; // started, or cancelled, meanwhile: wait for it the usual way
        }
        // No token of its own: runClaimed records the helped task in me.helping (volatile) before
        // its body runs, and a cancel of `me` that finds `helping` set wakes the helped task
        // wherever it parks (Task.requestCancel); one that comes before finds the helped task's
        // first suspend point already in effect (startAbove reads it in `me` and marks the task).
        try {
            inPlace.runInPlace(io, awaited, me, slot);
        } catch (Throwable escaped) { // the body's failure is the task's: this is the JVM's (out of memory)
            awaited.failClaimedAfterEscape(escaped); // claimed here: no one else would ever end it
            me.forgetHelping(awaited);
            throw escaped;
        }
        return true;
    }

    /**
     * Under an inline Io (or join helping), the tasks that started {@code me} on this thread are
     * suspended below it on the stack until {@code me} ends: awaiting one of them can never finish.
     */
    private static void checkNotInlineAncestor(Task<?> awaited, Task<?> me) {
        for (Task<?> t = me.inlineParent(); t != null; t = t.inlineParent()) {
            if (t == awaited) {
                throw new IllegalStateException(
                        me + " awaits " + awaited + ", which runs it in place on the same thread"
                                + " (inline, or awaiting it before it started) and cannot finish before it does");
            }
        }
    }

    /**
     * What {@code task} waits for now: the task it awaits, else the task it runs in place above
     * itself on its stack (it cannot go on before that one ends), else null.
     */
    private static Task<?> waitsFor(Task<?> task) {
        Task<?> awaited = task.awaiting();
        return awaited != null ? awaited : task.helping();
    }

    private static void checkNoAwaitCycle(Task<?> awaited, Task<?> me) {
        int hops = 0;
        for (Task<?> t = awaited; t != null && hops < MAX_AWAIT_CHAIN; t = waitsFor(t), hops++) {
            if (t != me && t.isCancellationEffective()) {
                break; // it is being woken to unwind: the chain will break by itself
            }
            if (t == me) {
                me.setAwaiting(null);
                throw new IllegalStateException("await cycle: " + me + " awaits " + awaited
                        + ", which is (transitively) awaiting " + me + "; neither could ever finish");
            }
        }
    }

    /**
     * Waits for {@code awaited} to end, whatever the caller's interrupt flag or cancellation says
     * ({@code caller}: the task running on this thread, or null on a plain thread, whose waits
     * end on interrupt: it waits again, and gets its interrupt back after). A shield's wait, for a
     * task or a plain thread alike.
     */
    static void joinUninterruptibly(Task<?> awaited, Task<?> caller) {
        if (caller != null) {
            caller.enterShield(); // its cancellation (often what ended its own wait) must not stop this one
            try {
                awaited.join();
            } finally {
                caller.exitShield();
            }
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            while (!awaited.isDone()) {
                try {
                    CancelScope.plainThreadShield(() -> {
                        awaited.join(); // a scope the thread owns does not stop this wait either
                        return null;
                    });
                } catch (Cancelled anotherInterrupt) { // a plain thread's wait ends on interrupt: wait again
                    interrupted |= Thread.interrupted();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
