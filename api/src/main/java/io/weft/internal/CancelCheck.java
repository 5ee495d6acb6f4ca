package io.weft.internal;

import static io.weft.internal.TaskState.BELOW_CANCELLED;
import static io.weft.internal.TaskState.BELOW_SCOPED;
import static io.weft.internal.TaskState.CANCEL_REQUESTED;
import static io.weft.internal.TaskState.HELPED;
import static io.weft.internal.TaskState.PLAIN_SCOPED;
import static io.weft.internal.TaskState.SHIELD_MASK;

import io.weft.Cancelled;
import java.util.function.BooleanSupplier;

/**
 * Whether a task's cancellation is in effect: the check every suspend point and checkpoint makes,
 * defined by a walk down the task's stack of tasks, and the marks that let the common check skip
 * the walk. Not instantiable; thread-safe.
 */
final class CancelCheck {
    /*
     * Implementation notes.
     *
     * What stops a task (stopper): its own cancel, a CancelScope of its own, or, down its stack
     * (the tasks it runs above, through inlineParent), the cancel of an awaiter running it in
     * place (join helping: while it runs there, it is part of that awaiter) and the scopes of
     * every task below it (an inline child runs inside its parent's scopes, as Trio's are
     * lexical). A parent's own cancel does not reach an inline child (a task of its own). Each
     * task is looked at with its own shield depth, and a shield stops the walk. A root started
     * inside a plain thread's scopes (PLAIN_SCOPED) ends the walk with PLAIN_ROOT, which only that
     * thread can resolve (resolve).
     *
     * The check's fast path: stacks of tasks get deep (join helping goes 32 levels down; an inline
     * Io's children nest as deep as the program's spawns do), and a walk per check made them
     * quadratic: in a scratch run of Futures.awaitChain with the help depth unbounded (every link
     * in place), stopper was about a third of the runners' time; a recursive fork/join (fib(22) on
     * one worker) took about a quarter less time without the walk (BENCHMARKS.md, "2026-11-29,
     * eighteenth session"). Two bits make the common answer, "no", one read of the word and one
     * of extras: BELOW_SCOPED, computed once as the task starts (Task.stackBits), says whether any
     * task below has scopes (they cannot change while this task runs above them: their code is
     * suspended under it), and BELOW_CANCELLED says a task below may have been cancelled. Only
     * then does the check walk; the walk stays the definition (shields, inline links).
     *
     * BELOW_CANCELLED follows the walk's rule: a cancel reaches up only through tasks run in place
     * (HELPED, fixed at the claim), so marking stops at the first task that is not (an inline
     * child), which keeps the marks off stacks the cancel does not reach. It pairs up like cancel
     * vs park: the canceller CASes CANCEL_REQUESTED (or the mark) in and then reads `helping` to
     * mark the task above (markAbove); a task starting above writes the parent's `helping` and
     * then reads the parent's word (Task.startAbove). One side sees the other, so a task above a
     * cancelled one is marked before the canceller wakes it (Task.wakeParked) and before cancel()
     * returns (a second cancel() that finds the request made marks too, for the first may not
     * have yet). For the tasks above, the cancel takes effect with the marks, not with the CAS: a
     * check made while cancel() runs may pass, as if it came just before it (the awaiter itself
     * cannot look meanwhile: it is suspended under them). jcstress: TaskCancelVsHelpStartTest.
     *
     * Cost: the common check, one read of the word and one of extras; a walk, two volatile reads
     * per task on the stack (state, extras); a mark, one CAS per task above, once per cancel.
     */

    /** What {@link #stopper} returns when the walk reached a PLAIN_SCOPED root unshielded. */
    private static final Object PLAIN_ROOT = new Object();

    private CancelCheck() {}

    /**
     * Whether cancellation is in effect for {@code task}: its own cancel, or a {@link CancelScope}
     * around it, or the cancel of an awaiter running it in place, unless a shield defers it.
     */
    static boolean isEffective(Task<?> task) {
        long s = task.word();
        if ((s & CANCEL_REQUESTED) != 0 && (s & SHIELD_MASK) == 0) {
            return true;
        }
        if ((s & (PLAIN_SCOPED | BELOW_SCOPED | BELOW_CANCELLED)) == 0 && task.cancelScopes() == null) {
            return false; // the common case, however deep the stack: one more read (extras); see the notes
        }
        return resolve(task, stopper(task, s, null), null) != null;
    }

    /**
     * {@link #isEffective(Task)} evaluated on another thread, with {@code plainScopes} the probe of
     * the plain thread the task's stack started on (null if it had none).
     */
    static boolean isEffective(Task<?> task, BooleanSupplier plainScopes) {
        Object by = stopper(task, task.word(), null);
        return by == PLAIN_ROOT ? plainScopes != null && plainScopes.getAsBoolean() : by != null;
    }

    /** {@link #isEffective(Task)} as if {@code skip} (one of the task's scopes) were ended. */
    static boolean isEffectiveIgnoring(Task<?> task, CancelScope skip) {
        return resolve(task, stopper(task, task.word(), skip), skip) != null;
    }

    /** The signal for a cancellation in effect for {@code task}, or null. */
    static Cancelled signal(Task<?> task) {
        Object by = resolve(task, stopper(task, task.word(), null), null);
        if (by instanceof Task<?> cancelled) {
            return new CancelSignal(cancelled);
        }
        return by instanceof CancelScope stopped ? stopped.signal() : null;
    }

    /**
     * What stops {@code task} (state {@code s}), in one walk down its stack (see the notes): a Task
     * whose own cancel is in effect, a {@link CancelScope} in effect, {@link #PLAIN_ROOT}, or null.
     */
    private static Object stopper(Task<?> task, long s, CancelScope skip) {
        Task<?> t = task;
        boolean ownCancelCounts = true;
        while (true) {
            boolean shielded = (s & SHIELD_MASK) != 0;
            if (ownCancelCounts && (s & CANCEL_REQUESTED) != 0 && !shielded) {
                return t;
            }
            CancelScope scopes = t.cancelScopes();
            CancelScope stopped = scopes != null ? CancelScope.effective(scopes, TaskState.shieldDepth(s), skip) : null;
            if (stopped != null) {
                return stopped;
            }
            Task<?> below = t.inlineParent();
            if (shielded || below == null) {
                return shielded || (s & PLAIN_SCOPED) == 0 ? null : PLAIN_ROOT;
            }
            ownCancelCounts &= (s & HELPED) != 0; // through helped links only: an inline child breaks it
            t = below;
            s = below.word();
        }
    }

    /**
     * Turns {@link #PLAIN_ROOT} into the plain thread's scope in effect, read on {@code task}'s own
     * thread (elsewhere it is unknown: null); passes anything else through.
     */
    private static Object resolve(Task<?> task, Object by, CancelScope skip) {
        if (by != PLAIN_ROOT) {
            return by;
        }
        return Thread.currentThread() == task.runningThread() ? CancelScope.plainThreadStopper(skip) : null;
    }

    /**
     * Whether the cancel of a task below {@code task} on its stack (an awaiter running it in
     * place, through tasks run in place) is in effect for it when its state is {@code s}: the
     * walk's answer is a task other than {@code task}. One read of the word when nothing below was
     * cancelled. For the interrupt that such a cancel sends a blocking JDK call (CancelInterrupts).
     */
    static boolean cancelledBelow(Task<?> task, long s) {
        return (s & BELOW_CANCELLED) != 0 && stopper(task, s, null) instanceof Task<?> by && by != task;
    }

    /**
     * Sets BELOW_CANCELLED on {@code task} if it runs in place (HELPED) and has not ended; returns
     * whether it runs in place, i.e. whether a cancel below reaches it and the tasks above it.
     */
    static boolean markBelowCancelled(Task<?> task) {
        long s;
        while (TaskState.isRunningHelped(s = task.word()) && (s & BELOW_CANCELLED) == 0) {
            if (task.casWord(s, s | BELOW_CANCELLED)) {
                return true;
            }
        }
        return (s & HELPED) != 0;
    }

    /**
     * After {@code task}'s cancel was requested: marks the tasks running in place above it on its
     * stack BELOW_CANCELLED, each before reading the next one's link, up to the first that is not
     * run in place.
     */
    static void markAbove(Task<?> task) {
        for (Task<?> t = task.helping(); t != null && markBelowCancelled(t); t = t.helping()) {
            // each iteration marks one task
        }
    }
}
