package io.weft.internal;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimerHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;

/**
 * A cancellation limited to a stretch of one owner's code: the owner is a task, or a plain thread
 * outside any task. While it is open and {@linkplain #cancel cancelled} (or past its deadline),
 * the owner's suspend points throw {@link Cancelled} whose cause says why; once the owner
 * {@linkplain #end ends} it, that cancellation is gone and the owner runs on uncancelled. A task's
 * own cancellation ({@link Future#cancel()}) is not affected either way. This is what a
 * structured scope needs to stop its owner when a child fails or a deadline passes: kotlinx's
 * {@code coroutineScope} and Trio's cancel scopes are the models.
 *
 * <p>Scopes of one owner nest (a stack). A shield the owner enters after opening a scope defers
 * it, as it defers the task's own cancellation; a shield entered before it does not (the scope is
 * inside the shield). On a plain thread, {@link Io#shield} defers the thread's scopes the same way.
 *
 * <p>The owner opens, ends and checks; anyone may cancel. The package is exported only to Weft's
 * own modules; the combinators' {@code Scope} is the user-facing form.
 */
public final class CancelScope {
    /*
     * Implementation notes.
     *
     * Where the stack lives: a task keeps its innermost scope in its Task's side object
     * (Task.Extras, through cancelScopes() and setCancelScopes(); made by the first scope), a
     * plain thread in a ThreadLocal record (PlainThread). Both are written only by the owner's
     * thread (open, end); other threads read `cause` (volatile) of a scope they hold, and walk a
     * task's stack only as a hint (see "Effective").
     *
     * Effective: a scope counts if it is not ended, it is stopped (cause set, or its deadline
     * passed on its clock) and the owner's shield depth now is no deeper than when it opened. A
     * task above the owner on its stack walks down to it (a state bit set as that task starts says
     * a scope is open below: CancelCheck, "The check's fast path"); with nothing open it is one volatile
     * read per suspend point
     * (Task.extras, null for most tasks) or one ThreadLocal read (plain thread, a path that parks
     * an OS thread anyway).
     *
     * Cancel vs park (lost wake-up): cancel() CASes `cause` (volatile), then walks the owner
     * task's stack (the owner, then through `helping` each task running above it: inline
     * children, tasks run in place, all inside the scope) reading each one's parked token
     * (volatile) and unparking its thread; a task writes its parked token, then re-checks
     * effectiveness (reads `cause`). Sequentially consistent accesses: one sees the
     * other. A plain owner is unparked unconditionally (LockSupport permits make a late park
     * return). Spurious unparks are harmless: every park loop re-checks.
     *
     * Deadline: a timer on the clock readies a token made by the owner's thread, which unparks
     * that thread wherever it is parked; its wait loop re-checks and finds the deadline passed.
     * The first to notice installs the deadline's cause with the same CAS as cancel(), so the
     * cause never changes once seen; and cancel() looks first, so a cancel that comes after the
     * deadline passed (a child that failed when the deadline stopped it, before anyone looked)
     * does not replace the deadline's cause. Passed means: its timer fired (the token is ready;
     * the Io's own rule, under which a real clock's reading must pass the deadline), or the
     * reading has passed it (nowMs() > deadline: a CPU-bound owner, on a worker no timer fires
     * on while it runs, still sees it). Not a reading that has only reached it: a truncated
     * reading reaches a deadline up to a millisecond before the scope has lasted its timeout.
     * A virtual clock stops at the deadline, where its timer fires. A scope that must be over at
     * once (a timeout of zero) is cancelled by its opener.
     *
     * Ending: `ended` is set by the owner, and ended scopes are unlinked from the top of the
     * stack; a scope ended while another is open above it stays linked (skipped) until those end.
     */

    private static final ThreadLocal<PlainThread> PLAIN = new ThreadLocal<>();
    /**
     * Set once some plain thread opened a scope; until then a task start skips the ThreadLocal
     * read that tells whether it starts inside a plain thread's scopes. Racy by design: a thread
     * reads its own write, and only its own scopes matter to the tasks it starts.
     */
    private static boolean plainScopesUsed;

    private static final VarHandle CAUSE;

    static {
        try {
            CAUSE = MethodHandles.lookup().findVarHandle(CancelScope.class, "cause", Throwable.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * A plain thread's scopes and shield depth. Only that thread writes it; another reads it only
     * under a lock the thread released after writing (Turns' monitor), through {@link #isCancelled}.
     */
    private static final class PlainThread {
        CancelScope top;
        int shieldDepth;

        boolean isCancelled() {
            return top != null && effective(top, shieldDepth, null) != null;
        }
    }

    private final Task<?> task;
    private final Thread thread;
    private final PlainThread plain;
    private final int shieldDepth;
    private final CancelScope outer;
    private final Io clock;
    private final long deadlineMs;
    private final Throwable onDeadline;
    private final TimerHandle timer; // of the deadline, or null
    private final ParkToken deadlineToken; // readied by the deadline's timer, or null
    private volatile Throwable cause;
    /** Set by the owner; volatile because other threads' cycle checks read the owner's stack. */
    private volatile boolean ended;
    /** Whether the owner's suspend point threw this scope's signal (owner thread only). */
    private boolean delivered;

    private CancelScope(Task<?> task, PlainThread plain, Io clock, long deadlineMs, Throwable onDeadline) {
        this.task = task;
        this.thread = Thread.currentThread();
        this.plain = plain;
        this.clock = clock;
        this.deadlineMs = deadlineMs;
        this.onDeadline = onDeadline;
        // armed before it is linked: if arming throws, nothing is left on the owner's stack
        this.deadlineToken = deadlineMs == Io.NO_DEADLINE ? null : ParkToken.create();
        this.timer = deadlineToken == null ? null : clock.armTimer(deadlineMs, deadlineToken);
        if (task != null) {
            this.shieldDepth = task.shieldDepth();
            this.outer = task.cancelScopes();
        } else {
            this.shieldDepth = plain.shieldDepth;
            this.outer = plain.top;
        }
    }

    /** Makes this scope its owner's innermost; after construction, so no reader sees it unfinished. */
    private CancelScope link() {
        if (task != null) {
            task.setCancelScopes(this);
        } else {
            plain.top = this;
        }
        return this;
    }

    /**
     * Opens a scope for the calling task (or plain thread) without a deadline.
     *
     * @return the open scope, innermost of its owner's
     */
    public static CancelScope open() {
        return open(null, Io.NO_DEADLINE, null);
    }

    /**
     * Opens a scope for the calling task (or plain thread) that stops by itself at
     * {@code deadlineMs} on {@code clock}'s clock, with {@code onDeadline} as its cause.
     *
     * @param clock the Io whose clock and timers measure the deadline; may be null without one
     * @param deadlineMs the deadline, or {@link Io#NO_DEADLINE}
     * @param onDeadline the cause once the deadline passed (what the owner will see and rethrow)
     * @return the open scope, innermost of its owner's
     */
    public static CancelScope open(Io clock, long deadlineMs, Throwable onDeadline) {
        if (deadlineMs != Io.NO_DEADLINE) {
            Objects.requireNonNull(clock, "clock");
            Objects.requireNonNull(onDeadline, "onDeadline");
        }
        Task<?> task = Context.currentTask();
        if (task != null) {
            return new CancelScope(task, null, clock, deadlineMs, onDeadline).link();
        }
        PlainThread plain = PLAIN.get();
        if (plain == null) {
            plain = new PlainThread();
            PLAIN.set(plain);
            plainScopesUsed = true;
        }
        return new CancelScope(null, plain, clock, deadlineMs, onDeadline).link();
    }

    /**
     * Stops this scope with {@code why} as its cause, unless it already stopped (an earlier
     * cancel, or its deadline passed: the deadline's cause stays): the owner's next suspend point
     * inside it throws, and a parked owner is woken now. Any thread.
     *
     * @param why the cause the owner will see
     * @return whether this call stopped it
     */
    public boolean cancel(Throwable why) {
        Objects.requireNonNull(why, "why");
        Throwable already = cause(); // a deadline passed keeps its cause (this look may install it)
        if (already != null || !CAUSE.compareAndSet(this, null, why)) {
            if (already != null && already == onDeadline) {
                wakeOwner(); // the reading passed the deadline before its timer fired: wake a parked owner now
            }
            return false;
        }
        wakeOwner();
        return true;
    }

    /** Wakes the owner wherever it is parked (its wait loop re-checks; a spare wake-up is harmless). */
    private void wakeOwner() {
        if (task != null) {
            task.wakeParked();
        } else {
            Wake.unpark(thread);
        }
    }

    /**
     * Returns why this scope stopped (its cancel's cause, or the deadline's once it passed while
     * the scope was open), or null while it has not. Any thread.
     *
     * @return the cause, or null
     */
    public Throwable cause() {
        Throwable why = cause;
        if (why == null && deadlineToken != null && !ended && (deadlineToken.isReady() || clock.nowMs() > deadlineMs)) {
            CAUSE.compareAndSet(this, null, onDeadline);
            why = cause;
        }
        return why;
    }

    /**
     * Ends this scope: its cancellation, if any, no longer affects the owner, and its timer is
     * cancelled. Idempotent. Only the owner calls this.
     *
     * @throws IllegalStateException if called by another thread
     */
    public void end() {
        requireOwnerThread();
        if (ended) {
            return;
        }
        ended = true;
        if (timer != null) {
            timer.cancel();
        }
        if (task != null) {
            CancelScope top = task.cancelScopes();
            while (top != null && top.ended) {
                top = top.outer;
            }
            task.setCancelScopes(top);
        } else {
            CancelScope top = plain.top;
            while (top != null && top.ended) {
                top = top.outer;
            }
            plain.top = top;
            if (top == null && plain.shieldDepth == 0) {
                PLAIN.remove();
            }
        }
    }

    /**
     * Whether the owner's cancellation is in effect for some reason other than this scope: its own
     * cancel (a task; for a plain thread, an interrupt), or another open scope of the owner. Only
     * the owner calls this.
     *
     * @return whether the owner would be cancelled with this scope ended
     */
    public boolean ownerCancelledOtherwise() {
        requireOwnerThread();
        if (task != null) {
            return task.isCancellationEffectiveIgnoring(this);
        }
        return Thread.currentThread().isInterrupted() || effective(plain.top, plain.shieldDepth, this) != null;
    }

    /**
     * Whether a suspend point on the owner's stack has thrown this scope's {@link Cancelled}
     * (whose cause is {@link #cause()}): the owner may hold it now. Only the owner calls this.
     *
     * @return whether the signal was delivered
     */
    public boolean wasDelivered() {
        return delivered;
    }

    /**
     * Returns {@code future}'s failure without counting as observing it (for a scope recording its
     * children's outcomes), or null if it did not fail.
     *
     * @param future a Future made by Weft
     * @return the failure, or null
     */
    public static Throwable peekFailure(Future<?> future) {
        return Task.of(future, "future").peekFailure();
    }

    /**
     * Whether {@code future}'s failure was observed: reported by an await, or read with
     * {@link Future#exceptionNow()}.
     *
     * @param future a Future made by Weft
     * @return whether someone has seen its failure
     */
    public static boolean failureObserved(Future<?> future) {
        return Task.of(future, "future").isFailureObserved();
    }

    // ---------------------------------------------------------------- the checks, for suspend points

    /**
     * The innermost scope in {@code top}'s chain, other than {@code skip}, in effect at shield depth
     * {@code depth}, or null.
     */
    static CancelScope effective(CancelScope top, int depth, CancelScope skip) {
        for (CancelScope c = top; c != null; c = c.outer) {
            if (c != skip && !c.ended && depth <= c.shieldDepth && c.cause() != null) {
                return c;
            }
        }
        return null;
    }

    /**
     * The signal thrown at a suspend point inside this scope, on the owner's thread: the owner's
     * own, or one of a task running above it on its stack. Either way the owner may now hold it
     * (a task above may pass it down, or unwrap its cause): it counts as delivered.
     */
    Cancelled signal() {
        if (Thread.currentThread() == thread) {
            delivered = true;
        }
        return new CancelSignal(cause());
    }

    /**
     * Whether the calling thread is a plain thread with a scope open: a task starting here with no
     * task below it runs inside those scopes. A static read when no plain thread ever opened one.
     */
    static boolean plainThreadHasScopes() {
        if (!plainScopesUsed) {
            return false;
        }
        PlainThread plain = PLAIN.get();
        return plain != null && plain.top != null;
    }

    /** The calling plain thread's innermost scope in effect, other than {@code skip}, or null. */
    static CancelScope plainThreadStopper(CancelScope skip) {
        PlainThread plain = PLAIN.get();
        return plain == null || plain.top == null ? null : effective(plain.top, plain.shieldDepth, skip);
    }

    /**
     * For a plain thread (outside any task): whether one of its scopes is in effect. One
     * ThreadLocal read when none is open.
     *
     * @return whether the thread's next suspend point throws
     */
    public static boolean plainThreadCancelled() {
        PlainThread plain = PLAIN.get();
        return plain != null && plain.isCancelled();
    }

    /**
     * For a plain thread: a probe another thread may evaluate, under a lock this thread released
     * after its last change, to learn whether this thread's scopes stop it, or a task started
     * inside them (an inline Io's world deciding which waiting member can run; see
     * {@link Task#isCancellationEffective(BooleanSupplier)}); null if the thread has no scope open.
     *
     * @return the probe, or null
     */
    public static BooleanSupplier plainThreadProbe() {
        PlainThread plain = PLAIN.get();
        return plain == null || plain.top == null ? null : plain::isCancelled;
    }

    /**
     * For a plain thread with nothing installed: the Io whose clock measures the deadline of its
     * innermost open deadline scope, or null. Waiting through that Io (not a bare park) lets an
     * inline Io's waiting thread fire the deadline's timer itself.
     *
     * @return the clock Io, or null
     */
    public static Io plainThreadClock() {
        PlainThread plain = PLAIN.get();
        if (plain == null) {
            return null;
        }
        for (CancelScope c = plain.top; c != null; c = c.outer) {
            if (!c.ended && c.timer != null) {
                return c.clock;
            }
        }
        return null;
    }

    /**
     * For a plain thread: throws the signal of the innermost scope in effect, if any.
     *
     * @throws Cancelled if one of the thread's scopes is in effect
     */
    public static void throwIfPlainThreadCancelled() {
        PlainThread plain = PLAIN.get();
        if (plain != null && plain.top != null) {
            CancelScope c = effective(plain.top, plain.shieldDepth, null);
            if (c != null) {
                throw c.signal();
            }
        }
    }

    /**
     * For a plain thread: calls {@code body} with the thread's scopes deferred (what
     * {@link Io#shield} does for a task's cancellation).
     *
     * @param body the code to run shielded
     * @param <T> the value type
     * @return the body's value
     */
    public static <T> T plainThreadShield(Callable<T> body) {
        PlainThread plain = PLAIN.get();
        if (plain == null) {
            return Unchecked.call(body); // no scope open: nothing to defer (one opened inside ends inside)
        }
        plain.shieldDepth++;
        try {
            return Unchecked.call(body);
        } finally {
            plain.shieldDepth--;
        }
    }

    private void requireOwnerThread() {
        if (Thread.currentThread() != thread || (task != null && Context.currentTask() != task)) {
            throw new IllegalStateException(
                    "a CancelScope is ended and checked only by its owner (" + (task != null ? task : thread) + ")");
        }
    }

    @Override
    public String toString() {
        Throwable why = cause;
        return "CancelScope[" + (ended ? "ended" : why != null ? "cancelled: " + why : "open")
                + (deadlineMs != Io.NO_DEADLINE ? ", deadline=" + deadlineMs : "") + "]";
    }
}
