package io.weft.internal;

import static io.weft.internal.TaskState.CANCEL_REQUESTED;
import static io.weft.internal.TaskState.HELPED;
import static io.weft.internal.TaskState.INTERRUPTED;
import static io.weft.internal.TaskState.INTERRUPTING;
import static io.weft.internal.TaskState.LIFECYCLE;
import static io.weft.internal.TaskState.RUNNING;
import static io.weft.internal.TaskState.SHIELD_MASK;

/**
 * A cancel's interrupt of a task blocked in a JDK call (issue 13): delivered to the task's thread
 * only while the task runs on top of its stack, unshielded, and never left for the next task, an
 * awaiter or a carrier. Both sides' halves: the canceller's delivery ({@link #interruptBlockedCall})
 * and the task's hold and reclaim around a task run above it. Not instantiable; thread-safe.
 */
final class CancelInterrupts {
    /*
     * Implementation notes.
     *
     * A cancel that finds the task running and not parked at a Weft suspend point interrupts the
     * task's thread, so Thread.sleep, BlockingQueue.take, interruptible channels and the like
     * throw. Three rules keep the interrupt where it belongs:
     * (1) it is delivered only while the task is RUNNING on that thread: the canceller CASes
     * INTERRUPTING in (RUNNING, no shield, nothing running above the task on its stack), interrupts,
     * then clears it, and Task.complete waits for INTERRUPTING to clear before it claims completion,
     * so no interrupt can start after the task ended; complete then clears the flag on the task's
     * own thread if INTERRUPTED is set, so it never reaches the next task, an inline parent or a
     * carrier;
     * (2) shielded code is not interrupted: the canceller requires shield depth 0 in the same CAS,
     * Task.enterShield waits out INTERRUPTING and, entering the outermost shield, absorbs a pending
     * one (clears the flag); leaving the outermost shield of a cancelled task re-interrupts it,
     * since the cancellation is in effect again;
     * (3) a task running another above it on its stack (join helping, an inline child) is not
     * interrupted: the interrupt would land in the other task. Its cancel interrupts the topmost
     * task run in place above it instead, if every task between runs in place (a task run in place
     * is part of its awaiter: its blocking call gives up as the awaiter's own would, and as the
     * awaiter, parked in await had the task started elsewhere, would wake). That task is
     * interrupted under the same rules, on its own state word, as if cancelled itself: see "Cancel
     * from below" for the rest.
     *
     * For (3) the two sides pair up like cancel vs park: the task below writes `helping`
     * (volatile) then waits out INTERRUPTING (hold); the canceller CASes INTERRUPTING in, then
     * re-reads `helping` and interrupts only if it is still null (else it takes its bits back and
     * wakes the task above if parked). So an interrupt either landed before the task above
     * started, and Task.startAbove takes it off the thread (INTERRUPTED stays set), or it is held
     * back until `helping` is cleared. The task above publishes its thread only after that, so a
     * cancel of its own interrupts it after the clear, not before. Then the task below, on top
     * again, gets back what it is owed (reclaim, which waits out a canceller taking its bits
     * back): if one was delivered, or a cancel came meanwhile and is not shielded, its thread is
     * interrupted, so a blocking call it makes next throws. A task run in place is part of its
     * awaiter and sees the awaiter's cancellation at its suspend points; an inline child is a
     * task of its own and does not. A helped task's interrupt status is set aside and given back
     * too (Task.runHelped), so an Io that helps awaiters only sets aside the rest of the thread.
     *
     * Cancel from below: a task run in place (HELPED) for which the cancel of a task below is in
     * effect (CancelCheck.cancelledBelow: marked BELOW_CANCELLED and the walk, shields included,
     * finds the cancelled task) is treated as cancelled for the interrupt's rules: the awaiter's
     * canceller interrupts the top (interruptRunInPlace, after marking: CancelCheck.markAbove); a
     * task run in place that starts already marked interrupts itself as it starts (its awaiter's
     * canceller may have found no task above it yet, and interrupted the awaiter, whose interrupt
     * startAbove took off the thread); reclaim and Task.exitShield re-interrupt it; and its body's
     * InterruptedException ends it CANCELLED. A top that changes meanwhile (it starts another task
     * in place) is settled by those same paths: the new task starts marked, and reclaim gives the
     * top its interrupt back.
     *
     * The thread is published (release) after NEW -> RUNNING and startAbove, by the thread that
     * won it; a canceller that sees RUNNING before it waits until it is there (a few
     * instructions, or a task below's wait for an interrupt in flight).
     *
     * Cost: nothing on a task nobody cancels; a cancel of a running task makes two CASes (the bits
     * in, then out) and one Thread.interrupt; a task above another reads the word once as it
     * starts (hold) and once as it ends (reclaim).
     */

    private CancelInterrupts() {}

    /**
     * After a cancel found {@code task} running and not parked at a Weft suspend point: interrupts
     * its thread, so a blocking JDK call it may be in throws (see the notes for when it does not).
     */
    static void interruptBlockedCall(Task<?> task) {
        int spins = 0;
        while (true) {
            long s = task.word();
            if ((s & LIFECYCLE) != RUNNING || (s & (SHIELD_MASK | INTERRUPTING)) != 0 || task.helping() != null) {
                return;
            }
            Thread t = task.runningThread();
            if (t == null) { // between NEW -> RUNNING and publishing its thread: see the notes
                if (++spins % 64 == 0) {
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
                continue;
            }
            long added = INTERRUPTING | (~s & INTERRUPTED);
            if (task.casWord(s, s | added)) {
                // Re-read after the CAS: a task may have started above this one since the check
                // above. It writes `helping` then reads the state (hold), so one of the two
                // sides sees the other: either this sees it and holds back, or it waits for this
                // interrupt to land before that task runs.
                // No wake is needed when it holds back: requestCancel found `helping` null after its
                // CAS of CANCEL_REQUESTED, so the task above started later and its suspend points see it.
                boolean deliver = task.helping() == null;
                try {
                    if (deliver) {
                        t.interrupt();
                    }
                } finally {
                    clearBits(task, deliver ? INTERRUPTING : added);
                }
                return;
            }
        }
    }

    /**
     * After {@code awaiter}'s cancel found it running a task above it: interrupts the topmost task
     * run in place above it, if every task between runs in place and the cancel is in effect for
     * it (a shield of one of them holds it back); see the notes, (3) and "Cancel from below".
     */
    static void interruptRunInPlace(Task<?> awaiter) {
        Task<?> top = awaiter;
        for (Task<?> above; (above = top.helping()) != null; top = above) {
            if ((above.word() & HELPED) == 0) {
                return; // an inline child: a task of its own, which the awaiter's cancel does not reach
            }
        }
        if (top != awaiter) {
            interruptIfCancelledBelow(top);
        }
    }

    /**
     * Interrupts {@code task}, run in place, if the cancel of a task below it is in effect for it;
     * on its own thread as it starts, or from its awaiter's canceller (interruptRunInPlace).
     */
    static void interruptIfCancelledBelow(Task<?> task) {
        if (CancelCheck.cancelledBelow(task, task.word())) {
            interruptBlockedCall(task);
        }
    }

    private static void clearBits(Task<?> task, long bits) {
        while (true) {
            long s = task.word();
            if (task.casWord(s, s & ~bits)) {
                return;
            }
        }
    }

    /**
     * On {@code task}'s thread, right after a task above it on the stack was recorded in its
     * {@code helping}: waits out a cancel's interrupt in flight; from here until {@code helping} is
     * cleared, no cancel of {@code task} interrupts the thread. Returns whether a cancel's
     * interrupt of it was delivered and not absorbed (INTERRUPTED), which may now be on the thread.
     */
    static boolean hold(Task<?> task) {
        long s;
        while (((s = task.word()) & INTERRUPTING) != 0) {
            Thread.onSpinWait();
        }
        return (s & INTERRUPTED) != 0;
    }

    /**
     * Whether {@code task}'s thread must carry a cancel's interrupt now that the task is on top of
     * its stack again (the task above it, in {@code helping}, ended): one was delivered and not
     * absorbed (INTERRUPTED), or a cancel came while the other task ran and was held back, which
     * this marks INTERRUPTED. Returns whether the caller, on the task's thread, must interrupt it.
     * As for exitShield: the cancellation is in effect again, so a blocking call made next throws.
     */
    static boolean reclaim(Task<?> task) {
        while (true) {
            long s = task.word();
            if ((s & INTERRUPTING) != 0) {
                // A canceller that saw `helping` set is taking back the INTERRUPTED it added: wait
                // for it, or the bit would be cleared under an interrupt this returns true for
                Thread.onSpinWait();
                continue;
            }
            if ((s & INTERRUPTED) != 0) {
                return true;
            }
            if ((s & (LIFECYCLE | SHIELD_MASK)) != RUNNING
                    || task.helping() != null
                    || ((s & CANCEL_REQUESTED) == 0 && !CancelCheck.cancelledBelow(task, s))) {
                return false;
            }
            if (task.casWord(s, s | INTERRUPTED)) {
                return true;
            }
        }
    }

    /** Whether {@code t} is how a blocking JDK call reports the interrupt a cancel of {@code task} sent. */
    static boolean isInterruptFromCancel(Task<?> task, Throwable t) {
        long s = task.word();
        return ((s & CANCEL_REQUESTED) != 0 || CancelCheck.cancelledBelow(task, s))
                && (t instanceof InterruptedException
                        || t instanceof java.nio.channels.ClosedByInterruptException
                        || t instanceof java.io.InterruptedIOException);
    }
}
