package io.weft.internal;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.Registration;
import io.weft.TimedOut;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The task record behind every {@link Future}: its packed state word, its outcome, its awaiters.
 * Thread-safe. A task made by {@link #spawned} runs its body once through {@link #run()}; one
 * made by {@link #fromStage}, {@link #succeeded} or {@link #failedWith} has no body and is
 * completed from outside.
 */
public final class Task<T> extends WaiterStack implements Future<T>, RawTask, ScopedValue.CallableOp<T, Exception> {
    /*
     * Implementation notes.
     *
     * State word (one volatile long, changed only by CAS):
     *
     *   bits 0-2   lifecycle: NEW, RUNNING, COMPLETING, SUCCEEDED, FAILED, CANCELLED (last three: done)
     *   bit  3     CANCEL_REQUESTED: sticky once set
     *   bit  4     STARTED: set with NEW -> RUNNING and kept, so run() can tell a task cancelled
     *              before start (return quietly) from one run twice (an Io bug: throw)
     *   bit  5     HELPED: set with NEW -> RUNNING when an awaiter claimed the task to run it in
     *              place (claimForHelper; join helping) and kept: its queued entry, run later,
     *              returns quietly, and runHelped runs only a task that has it
     *   bit  6     INTERRUPTING: a canceller is interrupting the task's thread right now; the
     *              task neither completes, enters a shield, starts another task above itself
     *              (holdInterrupts) nor takes an interrupt back (reclaimInterrupt) until it clears
     *   bit  7     INTERRUPTED: a cancel interrupted the task's thread (or the task re-interrupted
     *              itself on leaving a shield) and the task has not absorbed it yet
     *   bit  8     OBSERVED: set on a FAILED task once its failure was reported (await, exceptionNow),
     *              so a supervisor scope knows which failures nobody saw
     *   bit  9     PLAIN_SCOPED: set with NEW -> RUNNING when the task starts, with no task below it,
     *              on a plain thread that has CancelScopes open (an inline Io under a plain owner):
     *              it runs inside them, as an inline child runs inside its parent task's
     *   bit 10     AWAITED: a task has begun an untimed await of this one (sticky until completion,
     *              set by the awaiter with one atomic OR); only an awaited task can close an await
     *              cycle, so only it walks the await chain (see Awaiting)
     *   bit 11     BELOW_SCOPED: set with NEW -> RUNNING when the task starts above another on its
     *              stack that has CancelScopes open, is BELOW_SCOPED or PLAIN_SCOPED: a scope below
     *              may stop it (see "The check's fast path")
     *   bit 12     BELOW_CANCELLED: a task below this one on its stack had its cancel requested,
     *              and every task from there up to this one runs in place (HELPED): only then
     *              does that cancel reach this task; set by the canceller, or by this task as it
     *              starts (see "The check's fast path"); dropped at completion
     *   bits 16-31 shield depth: changed by the task's own thread (enterShield/exitShield), and
     *              cleared by the claim of completion
     *   bits 32-47 inline depth: how many tasks run in place below this one on its stack
     *              (inlineParent chain), saturating; set by the NEW -> RUNNING CAS itself (no
     *              extra atomic, no field), dropped at completion
     *
     * Transitions (who -> what):
     *
     *   NEW -> RUNNING                         // run(): the Io starts the task
     *   NEW -> RUNNING+HELPED                  // claimForHelper: an awaiter runs it in place (runHelped)
     *   NEW -> COMPLETING -> CANCELLED         // cancel() before start: body never runs, done at once
     *   NEW -> COMPLETING -> SUCCEEDED|FAILED|CANCELLED      // bodiless tasks, completed from outside
     *   RUNNING -> RUNNING+CANCEL_REQUESTED    // cancel() while running: wakes the parked task
     *   RUNNING -> SUCCEEDED|FAILED|CANCELLED  // the body returned or threw (its own thread: one CAS)
     *
     * COMPLETING makes completion a claim-then-publish where several threads may complete: the
     * one thread whose CAS claimed it writes the outcome, then publishes the final lifecycle with
     * a volatile write. A cancel that sees COMPLETING reports ALREADY_DONE: the outcome is
     * already decided. A RUNNING task is completed only by its own thread (a cancel only sets
     * CANCEL_REQUESTED), so it needs no claim: it writes the outcome and moves RUNNING -> done
     * with one CAS, retrying (and recomputing the outcome) if a cancel changed the word.
     *
     * A value returned after CANCEL_REQUESTED is dropped (CANCELLED): once cancel() returned true
     * the future never succeeds. A non-Cancelled exception is kept (FAILED): nothing is replaced.
     * Packing cancel and shield depth in one word makes "cancelled and not shielded" one atomic
     * read, so a canceller decides whether to wake the task from the same snapshot the task
     * itself checks.
     *
     * Outcome: `work` holds the body until the running thread takes it (after winning NEW ->
     * RUNNING), then the outcome (value or Throwable), written by the claiming thread after
     * COMPLETING and before the volatile write of the final state; it is read as an outcome only
     * after reading a done state, and as a body only by the thread that won NEW -> RUNNING. A
     * cancel before start wins COMPLETING instead, so the body is never taken: the outcome
     * replaces it.
     *
     * Size: 56 bytes with compressed references (a spawn allocates it; the thief's claim and the
     * awaiter's read move its cache lines between cores, so every field counts). What few tasks use
     * lives in Extras, made on first use and installed by CAS: the id (drawn only for a message),
     * the cancel-scope stack (a task that opens a CancelScope) and the await link (a task that
     * begins an untimed await of a task not done). A task with Extras takes 88 bytes in all.
     *
     * Cancel vs park (the lost-cancel race): the task writes `parked` (volatile) then re-reads the
     * state; cancel() CASes the state then reads `parked` and unparks its owner. Volatile accesses
     * are sequentially consistent, so one side always sees the other. See ParkToken.
     *
     * Cancel vs a blocking JDK call (issue 13): a cancel that finds the task running and not parked
     * at a Weft suspend point interrupts the task's thread, so Thread.sleep, BlockingQueue.take,
     * interruptible channels and the like throw. Three rules keep the interrupt where it belongs:
     * (1) it is delivered only while the task is RUNNING on that thread: the canceller CASes
     * INTERRUPTING in (RUNNING, no shield, nothing running above the task on its stack), interrupts,
     * then clears it, and complete() waits for INTERRUPTING to clear before it claims completion, so
     * no interrupt can start after the task ended; complete() then clears the flag on the task's own
     * thread if INTERRUPTED is set, so it never reaches the next task, an inline parent or a carrier;
     * (2) shielded code is not interrupted: the canceller requires shield depth 0 in the same CAS,
     * enterShield waits out INTERRUPTING and, entering the outermost shield, absorbs a pending one
     * (clears the flag); leaving the outermost shield of a cancelled task re-interrupts it, since
     * the cancellation is in effect again; (3) a task running another above it on its stack (join
     * helping, an inline child) is not interrupted: the interrupt would land in the other task.
     * For (3) the two sides pair up like cancel vs park: the task below writes `helping` (volatile)
     * then waits out INTERRUPTING (holdInterrupts); the canceller CASes INTERRUPTING in, then
     * re-reads `helping` and interrupts only if it is still null (else it takes its bits back and
     * wakes the task above if parked). So an interrupt either landed before the task above started,
     * and startAbove takes it off the thread (INTERRUPTED stays set), or it is held back until
     * `helping` is cleared. The task above publishes its thread only after that, so a cancel of
     * its own interrupts it after the clear, not before. Then the task below, on top again, gets
     * back what it is owed (reclaimInterrupt, which waits out a canceller taking its bits back): if
     * one was delivered, or a cancel came meanwhile and is not shielded, its thread is
     * interrupted, so a blocking call it makes next throws. A task run in place is part of its
     * awaiter and sees the awaiter's cancellation at its suspend points; an inline child is a
     * task of its own and does not. A helped task's interrupt status is set aside and given back
     * here too (runHelped), so an Io that helps awaiters only sets aside the rest of the thread.
     * The thread is published (release) after NEW -> RUNNING and startAbove, by the thread that won
     * it; a canceller that sees RUNNING before it waits until it is there (a few instructions,
     * or a task below's wait for an interrupt in flight).
     *
     * Awaiters: the WaiterStack this class extends; complete() closes it and runs its actions.
     * Awaiting (the await loop, join helping, cycle checks) and StageBridge (CompletionStage in
     * and out) are separate classes: this one is the state machine.
     *
     * Per task (spawn, run, complete, nobody parked on it): 1 allocation (the task); no
     * ScopedValue binding on a thread that owns a context slot (a runner fiber; see Context);
     * CASes: NEW -> RUNNING and RUNNING -> done; the waiter stack is only read when nobody
     * waits; no lock. The id is drawn only when a message needs it (a toString: a dump, a
     * cancelled task's signal); that, a task's first untimed await of a task not done, or its
     * first CancelScope makes its Extras (one allocation of 32 bytes, one CAS, once).
     *
     * The check's fast path: whether cancellation is in effect (isCancellationEffective, at every
     * suspend point and checkpoint) is defined by a walk down the task's stack (stopper): a task
     * run in place is stopped by its awaiter's cancel and by the scopes of every task below it.
     * Stacks of tasks get deep (join helping goes 32 levels down; an inline Io's children nest as
     * deep as the program's spawns do), and a walk per check made them quadratic: in a scratch run
     * of Futures.awaitChain with the help depth unbounded (every link in place), stopper was about
     * a third of the runners' time; a recursive fork/join (fib(22) on one worker) took about a
     * quarter less time without the walk (BENCHMARKS.md, "2026-11-29, eighteenth session"). Two
     * bits make the common answer, "no", one read of the word and one of extras: BELOW_SCOPED,
     * computed once as the task starts, says whether any task below has scopes (they cannot change
     * while this task runs above them: their code is suspended under it), and BELOW_CANCELLED says
     * a task below may have been cancelled. Only then does the check walk; the walk stays the
     * definition (shields, inline links). BELOW_CANCELLED follows the walk's rule: a cancel reaches
     * up only through tasks run in place (HELPED, fixed at the claim), so marking stops at the
     * first task that is not (an inline child), which keeps the marks off stacks the cancel does
     * not reach. It pairs up like cancel vs park: the canceller CASes CANCEL_REQUESTED (or the
     * mark) in and then reads `helping` to mark the task above; a task starting above writes the
     * parent's `helping` and then reads the parent's word (startAbove). One side sees the other, so
     * a task above a cancelled one is marked before the canceller wakes it (wakeParked) and before
     * cancel() returns (a second cancel() that finds the request made marks too, for the first may
     * not have yet). For the tasks above, the cancel takes effect with the marks, not with the CAS:
     * a check made while cancel() runs may pass, as if it came just before it (the awaiter itself
     * cannot look meanwhile: it is suspended under them). jcstress: TaskCancelVsHelpStartTest.
     *
     * Reference counts (the seed design's ref_count bits) are not needed: the garbage collector
     * frees a task once no queue, waiter or handle refers to it. `detached`/`join_interest` bits
     * are replaced by the awaiter stack itself.
     *
     */

    private static final long LIFECYCLE = 0b111L;
    private static final long NEW = 0;
    private static final long RUNNING = 1;
    private static final long SUCCEEDED = 2;
    private static final long FAILED = 3;
    private static final long CANCELLED = 4;
    /** Transient: the completing thread is writing the outcome. Not done yet, no longer cancellable. */
    private static final long COMPLETING = 5;

    private static final long CANCEL_REQUESTED = 1L << 3;
    /** Set by the NEW -> RUNNING transition and kept: tells "cancelled before start" apart. */
    private static final long STARTED = 1L << 4;
    /** Set with NEW -> RUNNING when an awaiter claimed the task to run it in place (join helping). */
    private static final long HELPED = 1L << 5;
    /** A canceller is interrupting the task's thread; see the notes. */
    private static final long INTERRUPTING = 1L << 6;
    /** A cancel's interrupt was delivered and not yet absorbed; see the notes. */
    private static final long INTERRUPTED = 1L << 7;
    /** Set on a done, failed task once its failure was reported to someone (await, exceptionNow). */
    private static final long OBSERVED = 1L << 8;
    /** Started on a plain thread with CancelScopes open, no task below it: it runs inside them. */
    private static final long PLAIN_SCOPED = 1L << 9;
    /** A task has begun an untimed await of this one: sticky until completion; see the notes. */
    private static final long AWAITED = 1L << 10;
    /** A task below this one on its stack has CancelScopes open (or is plain-scoped); see the notes. */
    private static final long BELOW_SCOPED = 1L << 11;
    /** A task below this one on its stack had its cancel requested; see the notes. */
    private static final long BELOW_CANCELLED = 1L << 12;
    /** What {@link #stopper} returns when the walk reached a PLAIN_SCOPED root unshielded. */
    private static final Object PLAIN_ROOT = new Object();

    private static final int DEPTH_SHIFT = 32;
    private static final long DEPTH_MASK = 0xFFFFL << DEPTH_SHIFT;
    private static final int SHIELD_SHIFT = 16;
    private static final long SHIELD_ONE = 1L << SHIELD_SHIFT;
    private static final long SHIELD_MASK = 0xFFFFL << SHIELD_SHIFT;

    private static final AtomicLong IDS = new AtomicLong();
    private static final VarHandle STATE;
    private static final VarHandle ID;
    private static final VarHandle EXTRAS;
    private static final VarHandle THREAD;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(Task.class, "state", long.class);
            ID = lookup.findVarHandle(Extras.class, "id", long.class);
            EXTRAS = lookup.findVarHandle(Task.class, "extras", Extras.class);
            THREAD = lookup.findVarHandle(Task.class, "thread", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** What a cancel request did. */
    enum CancelOutcome {
        /** The task was already done; nothing changed. */
        ALREADY_DONE,
        /** The task had not started: it is now done, cancelled, and its body will never run. */
        CANCELLED_BEFORE_START,
        /** The request was registered and the task, if parked, was woken. */
        REQUESTED,
        /** The request was registered; a shield defers it until the outermost shield exits. */
        DEFERRED_BY_SHIELD,
        /** A request was already registered. */
        ALREADY_REQUESTED
    }

    /** The Io the task was spawned on; null for a bodiless task. Written once. */
    private final Io io;
    /**
     * The body (a Callable) until the running thread takes it, then null; once done, the outcome
     * (value or Throwable), written by the claiming thread between COMPLETING and the final state.
     * One field for both: no thread reads the one while the other may be written (see the notes).
     */
    private Object work;
    /** Lifecycle, cancel request, shield depth. Written by CAS from any thread. */
    private volatile long state;
    /** The token this task is parked on, or null. Written by the task, read by cancellers. */
    private volatile ParkToken parked;
    /**
     * The task that was running on this thread when this one started, or null: under an inline Io
     * that task is suspended inside spawnRaw until this one ends. Written once by run().
     */
    private Task<?> inlineParent;
    /**
     * The task running above this one on its thread's stack now (run in place by join helping, or
     * an inline child), or null: written by this task's thread around that task's run (startAbove,
     * endAbove); read by cancellers (not to interrupt this thread, to mark the tasks above
     * BELOW_CANCELLED and to wake one that parked) and by an Io that cancels everything (a shielded
     * helper's cancel does not reach the helped task; the Io's close must).
     */
    private volatile Task<?> helping;
    /**
     * The thread running the body, or null before it starts: published (release) by that thread
     * after NEW -> RUNNING and startAbove (for a helped task, in runHelped) and never cleared;
     * read by cancellers (to interrupt), by complete() (whose interrupt flag to clear) and by
     * runHelped (non-null: already run).
     */
    private Thread thread;
    /** What few tasks use (id, cancel scopes, await link), or null until one of them is first needed. */
    private volatile Extras extras;
    /**
     * Where this task comes from, for diagnostics (an Io's dump of its task tree, toString): null,
     * the spawner (a Task), the name given at spawn (a String: {@code Io.async(name, body)}), or
     * both (a Named). One field, so the object stays small. The spawner is dropped when this
     * task completes (the name stays), so a finished task keeps nothing reachable through it;
     * while this task lives it keeps its spawner's Task object reachable, even after the spawner
     * ended. Plain: written at construction (published with the task) and by the completing
     * thread; readers are diagnostics, which may see either value.
     */
    private Object origin;

    /** A named task's origin while its spawner is kept. */
    private record Named(String name, Task<?> spawner) {}

    /** The fields few tasks use, kept out of Task so that every spawn allocates less. */
    private static final class Extras {
        /** A number for messages, drawn on first use (by CAS: any thread may draw it). */
        volatile long id;
        /**
         * The innermost {@link CancelScope} the task opened and has not ended, or null. Read and
         * written only by the task's own thread (others' reads are hints).
         */
        CancelScope cancelScopes;
        /** The task the task is awaiting, or null. Written by the task, read by others' cycle checks. */
        volatile Task<?> awaiting;
    }

    private Task(Io io, Callable<? extends T> body) {
        this.io = io;
        this.work = body;
    }

    private Task(Io io, Callable<? extends T> body, String name, Task<?> spawner) {
        this.io = io;
        this.work = body;
        this.origin = name == null ? spawner : spawner == null ? name : new Named(name, spawner);
    }

    /** Returns a task that will run {@code body} on {@code io} once the Io runs it. */
    public static <T> Task<T> spawned(Io io, Callable<? extends T> body) {
        return new Task<>(io, body);
    }

    /**
     * Returns a task that will run {@code body}, named {@code name} (or unnamed, with null), on the
     * Io installed here, as a child of the task running here (if any); what {@code Io.async} spawns.
     * One context lookup finds both.
     */
    public static <T> Task<T> spawnedHere(String name, Callable<? extends T> body) {
        Context.Slot slot = Context.slot();
        Io io = Context.ioIn(slot);
        return new Task<>(io != null ? io : DefaultIo.get(), body, name, Context.taskIn(slot));
    }

    /** Returns a bodiless task completed by {@code stage}. */
    public static <T> Task<T> fromStage(CompletionStage<? extends T> stage) {
        Task<T> task = new Task<>(null, null);
        StageBridge.completeFrom(stage, task);
        return task;
    }

    /** Completes a bodiless task with a value ({@code failure} null) or a failure; for StageBridge. */
    void completeFromOutside(T value, Throwable failure) {
        if (failure == null) {
            complete(SUCCEEDED, value);
        } else {
            complete(StageBridge.isCancellation(failure) ? CANCELLED : FAILED, failure);
        }
    }

    /** Returns a bodiless task that has succeeded with {@code value}. */
    public static <T> Task<T> succeeded(T value) {
        Task<T> task = new Task<>(null, null);
        task.complete(SUCCEEDED, value);
        return task;
    }

    /** Returns a bodiless task that has failed with {@code failure} (cancelled for a cancellation). */
    public static <T> Task<T> failedWith(Throwable failure) {
        Task<T> task = new Task<>(null, null);
        task.complete(StageBridge.isCancellation(failure) ? CANCELLED : FAILED, failure);
        return task;
    }

    /** Returns {@code future} as a task, or throws if it was not made by Weft. */
    static <T> Task<T> of(Future<T> future, String name) {
        if (future == null) {
            throw new NullPointerException(name);
        }
        if (future instanceof Task<T> task) {
            return task;
        }
        throw new IllegalArgumentException(
                name + " is not a Future made by Weft: " + future.getClass().getName());
    }

    // ---------------------------------------------------------------- running

    @Override
    public void run() {
        runIn(Context.slot());
    }

    /**
     * {@link #run()} for a caller that holds the calling thread's innermost context slot already
     * (a runner fiber: the slot it bound for its whole life), which spares the lookup. The slot
     * must be what {@link Context#slot()} would return here: given another, the task would be
     * current where lookups do not look (its body's Io.current and its await's task would be
     * the enclosing ones). Checked when assertions are on.
     */
    public void runIn(Context.Slot slot) {
        assert slot == Context.slot() : "runIn given a slot that is not the thread's innermost";
        if (io == null) {
            throw new IllegalStateException(this + " has no body to run: it is completed from outside");
        }
        long s = state;
        if ((s & LIFECYCLE) != NEW) {
            notStartable(s);
            return;
        }
        Task<?> parent = Context.taskIn(slot); // under an inline Io, the task this one runs above
        long depth = parent != null ? stackBits(parent) : CancelScope.plainThreadHasScopes() ? PLAIN_SCOPED : 0;
        while (true) {
            if ((s & LIFECYCLE) != NEW) {
                notStartable(s);
                return;
            }
            if (STATE.compareAndSet(this, s, (s & ~LIFECYCLE) | RUNNING | STARTED | depth)) {
                break;
            }
            s = state;
        }
        runClaimed(parent, slot);
    }

    /**
     * What run() does with a task that is no longer NEW: nothing if it was cancelled before start or
     * run in place by an awaiter; throws if it was started (an Io runs a task once).
     */
    private void notStartable(long s) {
        if ((s & STARTED) != 0 && (s & HELPED) == 0) {
            throw new IllegalStateException(this + " was already started; an Io runs a task once");
        }
    }

    /**
     * The bits a task started above {@code parent} on the same stack gets with NEW -> RUNNING: its
     * inline depth, and BELOW_SCOPED if a task below it has scopes (see "The check's fast path").
     */
    private static long stackBits(Task<?> parent) {
        long ps = parent.state;
        boolean scoped = (ps & (BELOW_SCOPED | PLAIN_SCOPED)) != 0 || parent.cancelScopes() != null;
        return (long) Math.min(parent.inlineDepth() + 1, 0xFFFF) << DEPTH_SHIFT | (scoped ? BELOW_SCOPED : 0);
    }

    /**
     * Runs the body of this task, which {@code awaiter} (the task running on the calling thread)
     * claimed to run in place, and completes it: what a {@link HelpsAwaiters} calls, once, inside
     * {@link HelpsAwaiters#runInPlace}, with the {@code slot} it was handed (the awaiter's: the
     * calling thread's innermost context slot, which the helped task is made current in for its
     * run). The helped task starts with no interrupt status; after it, the thread has the
     * awaiter's back, plus the interrupt of a cancel of the awaiter that came meanwhile. Throws, running nothing, if this task was not claimed by a helper or has already
     * been run: an Io bug. Only the claiming thread calls it.
     */
    public void runHelped(Task<?> awaiter, Context.Slot slot) {
        if ((state & (LIFECYCLE | HELPED)) != (RUNNING | HELPED) || thread != null) {
            throw new IllegalStateException(this + " was not claimed to run in place, or has already run");
        }
        Thread self = Thread.currentThread();
        // isInterrupted is a plain read; Thread.interrupted() calls into VirtualThread every time
        boolean interrupted = self.isInterrupted() && Thread.interrupted();
        try {
            runClaimed(awaiter, slot);
        } finally {
            if (self.isInterrupted()) {
                Thread.interrupted(); // what this task left
            }
            if (interrupted || awaiter.reclaimInterrupt()) { // and what a cancel of the awaiter held back
                self.interrupt();
            }
        }
    }

    /**
     * Runs the body of a task the calling thread claimed (NEW -> RUNNING) above {@code parent},
     * the task running on this thread now (null if none), and completes it; {@code slot} is this
     * thread's context slot, already looked up.
     */
    private void runClaimed(Task<?> parent, Context.Slot slot) {
        if (parent != null) {
            startAbove(parent); // out of line, as is endAbove: this method stays small enough to inline
        }
        // Published after startAbove cleared the parent's interrupt: a cancel of this task that
        // comes sooner waits for it (interruptBlockedCall), so its interrupt is never cleared with the parent's
        THREAD.setRelease(this, Thread.currentThread());
        try {
            T value;
            if (slot.owner == Thread.currentThread()) { // this task current in the thread's own slot: no binding
                Object saved = slot.current;
                slot.current = this;
                try {
                    value = takeBody().call(); // the body right here: no frame between it and run()
                } finally {
                    slot.current = saved;
                }
            } else {
                value = Context.bindAndCall(this); // no slot of its own (a plain thread's outermost task, a fork)
            }
            complete(SUCCEEDED, value);
        } catch (Cancelled c) {
            complete(CANCELLED, c);
        } catch (Throwable t) {
            complete(StageBridge.isCancellation(t) || interruptedByCancel(t) ? CANCELLED : FAILED, t);
        } finally {
            if (parent != null) {
                endAbove(parent);
            }
        }
    }

    /** Records that this task runs above {@code parent} on the calling thread's stack, from now until endAbove. */
    private void startAbove(Task<?> parent) {
        inlineParent = parent;
        parent.helping = this; // the parent's cancel no longer interrupts this thread: holdInterrupts
        if (parent.holdInterrupts()) {
            // The parent's cancel interrupted this thread (before a helper set the status aside, or
            // after): it is not this task's. The parent gets it back when this task ends (endAbove).
            Thread.interrupted();
        }
        // Read after the write of parent.helping: a cancel below that this read misses finds this
        // task in `helping` and marks it (see "The check's fast path")
        if ((state & HELPED) != 0 && (parent.state & (CANCEL_REQUESTED | BELOW_CANCELLED)) != 0) {
            markBelowCancelled();
        }
    }

    /**
     * Sets BELOW_CANCELLED on this task if it runs in place (HELPED) and has not ended; returns
     * whether it runs in place, i.e. whether a cancel below reaches it and the tasks above it.
     */
    private boolean markBelowCancelled() {
        long s;
        while (((s = state) & (LIFECYCLE | HELPED)) == (RUNNING | HELPED) && (s & BELOW_CANCELLED) == 0) {
            if (STATE.compareAndSet(this, s, s | BELOW_CANCELLED)) {
                return true;
            }
        }
        return (s & HELPED) != 0;
    }

    /**
     * After this task's cancel was requested: marks the tasks running in place above it on its
     * stack BELOW_CANCELLED, each before reading the next one's link, up to the first that is not
     * run in place (see "The check's fast path").
     */
    private void markAbove() {
        for (Task<?> t = helping; t != null && t.markBelowCancelled(); t = t.helping) {
            // each iteration marks one task
        }
    }

    /** After this task, run above {@code parent}, ended: {@code parent} is on top of the stack again. */
    private void endAbove(Task<?> parent) {
        parent.helping = null;
        if ((state & HELPED) == 0 && parent.reclaimInterrupt()) {
            Thread.currentThread().interrupt(); // (runHelped gives an awaiter its status back itself)
        }
    }

    /**
     * On this task's thread, right after a task above it on the stack was recorded in
     * {@code helping}: waits out a cancel's interrupt in flight; from here until {@code helping} is
     * cleared, no cancel of this task interrupts the thread. Returns whether a cancel's interrupt of
     * this task was delivered and not absorbed (INTERRUPTED), which may now be on the thread.
     */
    private boolean holdInterrupts() {
        long s;
        while (((s = state) & INTERRUPTING) != 0) {
            Thread.onSpinWait();
        }
        return (s & INTERRUPTED) != 0;
    }

    /**
     * Whether this task's thread must carry a cancel's interrupt now that this task is on top of its
     * stack again (the task above it, in {@code helping}, ended): one was delivered and not absorbed
     * (INTERRUPTED), or a cancel came while the other task ran and was held back, which this marks
     * INTERRUPTED. Returns whether the caller, on this task's thread, must interrupt it. As for
     * exitShield: the cancellation is in effect again, so a blocking call made next throws.
     */
    private boolean reclaimInterrupt() {
        while (true) {
            long s = state;
            if ((s & INTERRUPTING) != 0) {
                // A canceller that saw `helping` set is taking back the INTERRUPTED it added: wait
                // for it, or the bit would be cleared under an interrupt this returns true for
                Thread.onSpinWait();
                continue;
            }
            if ((s & INTERRUPTED) != 0) {
                return true;
            }
            if ((s & (LIFECYCLE | CANCEL_REQUESTED | SHIELD_MASK)) != (RUNNING | CANCEL_REQUESTED) || helping != null) {
                return false;
            }
            if (STATE.compareAndSet(this, s, s | INTERRUPTED)) {
                return true;
            }
        }
    }

    /** Whether {@code t} is how a blocking JDK call reports the interrupt a cancel of this task sent. */
    private boolean interruptedByCancel(Throwable t) {
        return (state & CANCEL_REQUESTED) != 0
                && (t instanceof InterruptedException
                        || t instanceof java.nio.channels.ClosedByInterruptException
                        || t instanceof java.io.InterruptedIOException);
    }

    /**
     * The body's call, made by {@link #run()} inside the task's binding; not for other callers.
     * Only the running thread reads the body (in {@code work}), after winning NEW -> RUNNING, and
     * lets it go. Throws for any other caller: once the task is done, {@code work} is its outcome.
     */
    @Override
    public T call() throws Exception {
        if ((state & LIFECYCLE) != RUNNING || thread != Thread.currentThread()) {
            throw new IllegalStateException(this + ": call() is a step of run(), made on the running thread");
        }
        return takeBody().call();
    }

    /** Takes the body for its one call; only the running thread, after winning NEW -> RUNNING. */
    private Callable<? extends T> takeBody() {
        @SuppressWarnings("unchecked")
        Callable<? extends T> body = (Callable<? extends T>) work;
        if (body == null) {
            throw new IllegalStateException(this + ": call() is a step of run(), made once");
        }
        work = null;
        return body;
    }

    /**
     * Makes the task done with {@code life} and {@code result}, unless it already is (or is being
     * completed). Returns whether this call completed it (private: callers only need to know
     * whether they won the claim).
     */
    private boolean complete(long life, Object result) {
        while (true) {
            long s = state;
            long current = s & LIFECYCLE;
            if (current != NEW && current != RUNNING) {
                return false;
            }
            if ((s & INTERRUPTING) != 0) {
                Thread.onSpinWait(); // a canceller is interrupting this thread: let it finish first
                continue;
            }
            long finalLife = life;
            Object finalResult = result;
            if (life == SUCCEEDED && (s & CANCEL_REQUESTED) != 0) {
                finalLife = CANCELLED; // a value after cancel() is dropped
                finalResult = null;
            }
            long kept = s & (CANCEL_REQUESTED | STARTED | HELPED);
            if (current == RUNNING) {
                // Only the task's own thread completes a running task, so there is nothing to claim: write the
                // outcome, then publish it with the one CAS that makes the task done (no COMPLETING step).
                work = finalResult;
                if (STATE.compareAndSet(this, s, kept | finalLife)) {
                    // Cleared only now: before the CAS a canceller could still deliver one (INTERRUPTING
                    // set and cleared again between our read and the CAS leaves the word as it was).
                    if ((s & INTERRUPTED) != 0 && Thread.currentThread() == thread) {
                        Thread.interrupted(); // a cancel's interrupt stays with the task that got it
                    }
                    forgetSpawner();
                    runWaiters();
                    return true;
                }
                continue;
            }
            if (STATE.compareAndSet(this, s, kept | COMPLETING)) {
                if ((s & INTERRUPTED) != 0 && Thread.currentThread() == thread) {
                    Thread.interrupted(); // a cancel's interrupt stays with the task that got it
                }
                finish(kept, finalLife, finalResult);
                return true;
            }
        }
    }

    /** Second half of completion: only the thread that moved the state to COMPLETING runs this. */
    private void finish(long keptBits, long life, Object result) {
        work = result;
        state = keptBits | life; // the volatile write publishes the outcome
        forgetSpawner();
        runWaiters();
    }

    private void forgetSpawner() {
        Object o = origin;
        if (o instanceof Task<?>) {
            origin = null;
        } else if (o instanceof Named named) {
            origin = named.name();
        }
    }

    // ---------------------------------------------------------------- cancellation

    @Override
    public boolean cancel() {
        return requestCancel() != CancelOutcome.ALREADY_DONE;
    }

    CancelOutcome requestCancel() {
        while (true) {
            long s = state;
            long life = s & LIFECYCLE;
            if (life != NEW && life != RUNNING) {
                return CancelOutcome.ALREADY_DONE; // done, or being completed by another thread
            }
            if (life == NEW) {
                if (STATE.compareAndSet(this, s, CANCEL_REQUESTED | COMPLETING)) {
                    finish(CANCEL_REQUESTED, CANCELLED, null);
                    return CancelOutcome.CANCELLED_BEFORE_START;
                }
                continue;
            }
            if ((s & CANCEL_REQUESTED) != 0) {
                if (helping != null) {
                    markAbove(); // the first canceller may not have marked them yet (see the notes)
                }
                return CancelOutcome.ALREADY_REQUESTED;
            }
            if (STATE.compareAndSet(this, s, s | CANCEL_REQUESTED)) {
                if (helping != null) {
                    markAbove(); // before any wake: a task above re-checks when it wakes
                }
                if ((s & SHIELD_MASK) != 0) {
                    return CancelOutcome.DEFERRED_BY_SHIELD;
                }
                ParkToken p = parked;
                if (p != null) {
                    Wake.unpark(p.owner());
                } else if (helping != null) {
                    // It runs another task above it: a task run in place (join helping) is part of
                    // it, so wake it if it is parked at a suspend point, where it sees this cancel
                    // through its inline parent (one side sees the other: see wakeParked); an
                    // inline child, a task of its own, parks again
                    wakeParked();
                } else {
                    interruptBlockedCall();
                }
                return CancelOutcome.REQUESTED;
            }
        }
    }

    /**
     * After a cancel found the task running and not parked at a Weft suspend point: interrupts its
     * thread, so a blocking JDK call it may be in throws (see the notes for when it does not).
     */
    private void interruptBlockedCall() {
        int spins = 0;
        while (true) {
            long s = state;
            if ((s & LIFECYCLE) != RUNNING || (s & (SHIELD_MASK | INTERRUPTING)) != 0 || helping != null) {
                return;
            }
            Thread t = (Thread) THREAD.getAcquire(this);
            if (t == null) { // between NEW -> RUNNING and publishing its thread: see the notes
                if (++spins % 64 == 0) {
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
                continue;
            }
            long added = INTERRUPTING | (~s & INTERRUPTED);
            if (STATE.compareAndSet(this, s, s | added)) {
                // Re-read after the CAS: a task may have started above this one since the check
                // above. It writes `helping` then reads the state (holdInterrupts), so one of the two
                // sides sees the other: either this sees it and holds back, or it waits for this
                // interrupt to land before that task runs.
                // No wake is needed when it holds back: requestCancel found `helping` null after its
                // CAS of CANCEL_REQUESTED, so the task above started later and its suspend points see it.
                boolean deliver = helping == null;
                try {
                    if (deliver) {
                        t.interrupt();
                    }
                } finally {
                    clearBits(deliver ? INTERRUPTING : added);
                }
                return;
            }
        }
    }

    private void clearBits(long bits) {
        while (true) {
            long s = state;
            if (STATE.compareAndSet(this, s, s & ~bits)) {
                return;
            }
        }
    }

    /**
     * Whether cancellation is in effect for this task: its own cancel, or a {@link CancelScope}
     * around it, or the cancel of an awaiter running it in place (join helping: while it runs
     * there, it is part of that awaiter), unless a shield defers it. See {@link #stopper}.
     */
    public boolean isCancellationEffective() {
        long s = state;
        if ((s & CANCEL_REQUESTED) != 0 && (s & SHIELD_MASK) == 0) {
            return true;
        }
        if ((s & (PLAIN_SCOPED | BELOW_SCOPED | BELOW_CANCELLED)) == 0 && cancelScopes() == null) {
            return false; // the common case, however deep the stack: one more read (extras); see the notes
        }
        return resolve(stopper(s, null), null) != null;
    }

    /**
     * {@link #isCancellationEffective()} evaluated on another thread, with {@code plainScopes} the
     * probe of the plain thread this task's stack started on ({@link CancelScope#plainThreadProbe},
     * taken on that thread; null if it had none).
     *
     * @param plainScopes the plain thread's probe, or null
     * @return whether this task's next suspend point throws
     */
    public boolean isCancellationEffective(BooleanSupplier plainScopes) {
        Object by = stopper(state, null);
        return by == PLAIN_ROOT ? plainScopes != null && plainScopes.getAsBoolean() : by != null;
    }

    /** {@link #isCancellationEffective()} as if {@code skip} (one of this task's scopes) were ended. */
    boolean isCancellationEffectiveIgnoring(CancelScope skip) {
        return resolve(stopper(state, skip), skip) != null;
    }

    /**
     * What stops this task, in one walk down its stack (this task, then the tasks it runs above,
     * through inlineParent): a Task whose own cancel is in effect (this one, or an awaiter running
     * it in place), a {@link CancelScope} in effect (one of this task's, or of a task below it: an
     * inline child runs inside its parent's scopes, as Trio's are lexical), {@link #PLAIN_ROOT}
     * if the walk reached a root started inside a plain thread's scopes, or null. Each task is
     * looked at with its own shield depth, and a shield stops the walk. A parent's own cancel does
     * not reach an inline child (it is a separate task); a helper's does (the helped task is part
     * of it). Cost: one pass, two volatile reads per task on the stack (state, extras); the
     * common check skips it (see "The check's fast path" in the notes).
     */
    private Object stopper(long s, CancelScope skip) {
        Task<?> t = this;
        boolean ownCancelCounts = true;
        while (true) {
            boolean shielded = (s & SHIELD_MASK) != 0;
            if (ownCancelCounts && (s & CANCEL_REQUESTED) != 0 && !shielded) {
                return t;
            }
            CancelScope scopes = t.cancelScopes();
            CancelScope stopped = scopes != null ? CancelScope.effective(scopes, shieldDepth(s), skip) : null;
            if (stopped != null) {
                return stopped;
            }
            Task<?> below = t.inlineParent;
            if (shielded || below == null) {
                return shielded || (s & PLAIN_SCOPED) == 0 ? null : PLAIN_ROOT;
            }
            ownCancelCounts &= (s & HELPED) != 0; // through helped links only: an inline child breaks it
            t = below;
            s = below.state;
        }
    }

    /**
     * Turns {@link #PLAIN_ROOT} into the plain thread's scope in effect, read on this task's own
     * thread (elsewhere it is unknown: null); passes anything else through.
     */
    private Object resolve(Object by, CancelScope skip) {
        if (by != PLAIN_ROOT) {
            return by;
        }
        return Thread.currentThread() == thread ? CancelScope.plainThreadStopper(skip) : null;
    }

    /** The signal for a cancellation in effect (see {@link #stopper}), or null. */
    private Cancelled cancellationSignal() {
        Object by = resolve(stopper(state, null), null);
        if (by instanceof Task<?> cancelled) {
            return new CancelSignal(cancelled + " was cancelled");
        }
        return by instanceof CancelScope stopped ? stopped.signal() : null;
    }

    /** Throws {@link Cancelled} if this task's cancellation is in effect. */
    public void throwIfCancelled() {
        if (isCancellationEffective()) {
            Cancelled signal = cancellationSignal();
            throw signal != null ? signal : new CancelSignal(this + " was cancelled");
        }
    }

    /** Publishes {@code token} as the one this task parks on; throws if cancellation is in effect. */
    public void enterPark(ParkToken token) {
        parked = token;
        if (isCancellationEffective()) {
            parked = null;
            throwIfCancelled();
        }
    }

    /**
     * Unparks whatever is parked on this task's stack (a CancelScope of it was cancelled): this
     * task, or a task running above it (an inline child, a task run in place), which is inside
     * the scope too. Each publishes its token (volatile) before re-checking the scope's cause; the
     * canceller wrote the cause before walking `helping` (volatile, set before the task above
     * started) and reading the tokens: one side sees the other.
     */
    void wakeParked() {
        for (Task<?> t = this; t != null; t = t.helping) {
            ParkToken p = t.parked;
            if (p != null) {
                Wake.unpark(p.owner());
            }
        }
    }

    /** The shield depth now; only meaningful on the task's own thread. */
    int shieldDepth() {
        return shieldDepth(state);
    }

    private static int shieldDepth(long s) {
        return (int) ((s & SHIELD_MASK) >>> SHIELD_SHIFT);
    }

    /** Clears the parked token after the park returned. */
    public void exitPark() {
        parked = null;
    }

    /** Adds one level of shield; only the task's own thread calls this. */
    public void enterShield() {
        while (true) {
            long s = state;
            if ((s & SHIELD_MASK) == SHIELD_MASK) {
                throw new IllegalStateException("shields nested deeper than " + (SHIELD_MASK >>> SHIELD_SHIFT));
            }
            if ((s & INTERRUPTING) != 0) {
                Thread.onSpinWait(); // an interrupt is landing: let it, then absorb it below
                continue;
            }
            boolean absorb = (s & SHIELD_MASK) == 0 && (s & INTERRUPTED) != 0;
            if (STATE.compareAndSet(this, s, (absorb ? s & ~INTERRUPTED : s) + SHIELD_ONE)) {
                if (absorb) {
                    Thread.interrupted(); // shielded code is never interrupted by a cancel
                }
                return;
            }
        }
    }

    /** Removes one level of shield; a pending cancel takes effect at the next suspend point. */
    public void exitShield() {
        while (true) {
            long s = state;
            if ((s & SHIELD_MASK) == 0) {
                throw new IllegalStateException("exitShield without enterShield");
            }
            boolean reinterrupt = (s & SHIELD_MASK) == SHIELD_ONE
                    && (s & CANCEL_REQUESTED) != 0
                    && (s & LIFECYCLE) == RUNNING
                    && helping == null
                    && Thread.currentThread() == thread;
            if (STATE.compareAndSet(this, s, (reinterrupt ? s | INTERRUPTED : s) - SHIELD_ONE)) {
                if (reinterrupt) {
                    Thread.currentThread().interrupt(); // the cancellation is in effect again
                }
                return;
            }
        }
    }

    // ---------------------------------------------------------------- awaiting

    @Override
    public T await() {
        Awaiting.awaitDone(this, Io.NO_DEADLINE, null, false);
        return report();
    }

    @Override
    public T await(Duration timeout) {
        if (timeout == null) {
            throw new NullPointerException("timeout");
        }
        if (isDone()) {
            return report();
        }
        // the caller's clock; a plain thread with nothing installed uses this future's own Io
        // (no default Io needed), and only a future of no Io falls back to the default
        Io clockIo = io != null && Context.currentIo() == null && Context.currentTask() == null ? io : Io.current();
        long deadline = Durations.deadline(clockIo.nowMs(), timeout);
        if (!Awaiting.awaitDone(this, deadline, clockIo, true)) {
            throw new TimedOut(this + " was not done after " + timeout);
        }
        return report();
    }

    /** Waits until done, ignoring the outcome; the loser-joining half of raceAndJoin. */
    void join() {
        Awaiting.awaitDone(this, Io.NO_DEADLINE, null, false);
    }

    /** Whether the task has not started (nor been cancelled before it did). */
    boolean isUnstarted() {
        return (state & LIFECYCLE) == NEW;
    }

    /**
     * Claims this unstarted task for {@code awaiter} to run in place (NEW -> RUNNING with STARTED
     * and HELPED); returns false if it started or was cancelled meanwhile.
     */
    boolean claimForHelper(Task<?> awaiter) {
        long depth = stackBits(awaiter);
        while (true) {
            long s = state;
            if ((s & LIFECYCLE) != NEW) {
                return false;
            }
            if (STATE.compareAndSet(this, s, (s & ~LIFECYCLE) | RUNNING | STARTED | HELPED | depth)) {
                return true;
            }
            // another bit changed (another awaiter marked it AWAITED): look again
        }
    }

    /**
     * Returns the task this one is running in place now (join helping), or null: an Io that
     * cancels every task it runs follows this chain, since a shielded helper's cancellation does
     * not reach the task it runs in place.
     */
    public Task<?> helping() {
        return helping;
    }

    /** Records what this task awaits (null when done awaiting), for others' cycle checks. */
    void setAwaiting(Task<?> awaited) {
        Extras e = awaited != null ? extras() : extras;
        if (e != null) {
            e.awaiting = awaited;
        }
    }

    Task<?> awaiting() {
        Extras e = extras;
        return e == null ? null : e.awaiting;
    }

    /** The innermost CancelScope this task opened and has not ended, or null; see Extras. */
    CancelScope cancelScopes() {
        Extras e = extras;
        return e == null ? null : e.cancelScopes;
    }

    /** Makes {@code scope} this task's innermost (null: none); only the task's own thread calls it. */
    void setCancelScopes(CancelScope scope) {
        Extras e = scope != null ? extras() : extras;
        if (e != null) {
            e.cancelScopes = scope;
        }
    }

    /** This task's Extras, made now if it has none (by CAS: any thread may need them). */
    private Extras extras() {
        Extras e = extras;
        if (e == null) {
            Extras fresh = new Extras();
            Extras witness = (Extras) EXTRAS.compareAndExchange(this, (Extras) null, fresh);
            e = witness == null ? fresh : witness;
        }
        return e;
    }

    /**
     * Notes that a task has begun an untimed await of this one (call after publishing that task's
     * {@link #setAwaiting}); one atomic OR, skipped once the bit is set.
     */
    void markAwaitedByTask() {
        if ((state & AWAITED) == 0) {
            STATE.getAndBitwiseOr(this, AWAITED);
        }
    }

    /** Whether a task has begun an untimed await of this one (it may close a cycle through us). */
    boolean isAwaitedByTask() {
        return (state & AWAITED) != 0;
    }

    Task<?> inlineParent() {
        return inlineParent;
    }

    int inlineDepth() {
        return (int) ((state & DEPTH_MASK) >>> DEPTH_SHIFT);
    }

    /** Reports the outcome of a done task: the value, or the failure under Weft's rules. */
    T report() {
        long life = state & LIFECYCLE;
        if (life == SUCCEEDED) {
            @SuppressWarnings("unchecked")
            T value = (T) work;
            return value;
        }
        if (life == FAILED) {
            markObserved();
            throw Unchecked.rethrowable((Throwable) work);
        }
        if (life == CANCELLED) {
            throw new Cancelled(this + " was cancelled", (Throwable) work);
        }
        throw new IllegalStateException(this + " is not done");
    }

    // ---------------------------------------------------------------- inspection

    @Override
    public boolean isDone() {
        long life = state & LIFECYCLE;
        return life == SUCCEEDED || life == FAILED || life == CANCELLED;
    }

    @Override
    public State state() {
        return switch ((int) (state & LIFECYCLE)) {
            case (int) SUCCEEDED -> State.SUCCESS;
            case (int) FAILED -> State.FAILED;
            case (int) CANCELLED -> State.CANCELLED;
            default -> State.PENDING;
        };
    }

    @Override
    public T resultNow() {
        if ((state & LIFECYCLE) != SUCCEEDED) {
            throw new IllegalStateException(this + " did not succeed");
        }
        @SuppressWarnings("unchecked")
        T value = (T) work;
        return value;
    }

    @Override
    public Throwable exceptionNow() {
        if ((state & LIFECYCLE) != FAILED) {
            throw new IllegalStateException(this + " did not fail");
        }
        markObserved();
        return (Throwable) work;
    }

    /** The failure of a failed task without marking it observed, else null; for structured scopes. */
    Throwable peekFailure() {
        return (state & LIFECYCLE) == FAILED ? (Throwable) work : null;
    }

    /** Whether this failed task's failure was reported to someone. */
    boolean isFailureObserved() {
        return (state & OBSERVED) != 0;
    }

    /** Records that this done task's failure was reported (a cold path: only failures come here). */
    private void markObserved() {
        if ((state & OBSERVED) == 0) {
            STATE.getAndBitwiseOr(this, OBSERVED); // done: nothing else changes the word any more
        }
    }

    @Override
    public Registration onDone(Runnable action) {
        if (action == null) {
            throw new NullPointerException("action");
        }
        Waiter node = addWaiter(action);
        if (node == null) {
            runReporting(action); // done: runs here, and reports a failure as the completing thread would
            return () -> {};
        }
        return () -> removeWaiter(node);
    }

    @Override
    public CompletableFuture<T> toCompletableFuture() {
        return StageBridge.mirror(this);
    }

    /**
     * Whether an awaiter claimed this task and ran it in place (join helping). The Io counts such
     * a task's end when the helper finishes it; its queued entry, run later, finds nothing to do.
     */
    public boolean ranInPlace() {
        return (state & HELPED) != 0;
    }

    /**
     * Whether this task's queued entry has nothing to run, in one read of the state: an awaiter
     * ran it in place ({@link #ranInPlace}), or it was cancelled before it started (done; the Io
     * that meets the entry counts its end instead of starting a thread to find it done).
     */
    public boolean nothingToRun() {
        long s = state;
        return (s & HELPED) != 0 || ((s & LIFECYCLE) == CANCELLED && (s & STARTED) == 0);
    }

    /** Whether this task was cancelled while it ran (for diagnostics and tests). */
    public boolean isCancelRequested() {
        return (state & CANCEL_REQUESTED) != 0;
    }

    /** The Io this task was spawned on, or null for a bodiless task. */
    public Io io() {
        return io;
    }

    /** The name given at spawn, or null. */
    public String name() {
        Object o = origin;
        return o instanceof String name ? name : o instanceof Named named ? named.name() : null;
    }

    /** The task that spawned this live one, or null (see the field); a diagnostic read. */
    public Task<?> spawner() {
        Object o = origin;
        return o instanceof Task<?> task ? task : o instanceof Named named ? named.spawner() : null;
    }

    /** The task this one is awaiting now (an untimed await; timed ones record nothing), or null; a diagnostic read. */
    public Task<?> awaitingNow() {
        return awaiting();
    }

    /** The token this task is parked on now, or null; a diagnostic read. */
    public ParkToken parkedOn() {
        return parked;
    }

    /** The thread running this task's body (set once it started), or null. */
    public Thread runningThread() {
        return (Thread) THREAD.getAcquire(this);
    }

    /** This task's number, drawn now if it has none yet (a diagnostic: one shared counter). */
    public long number() {
        return id();
    }

    private long id() {
        Extras e = extras();
        long n = e.id;
        if (n == 0) {
            long fresh = IDS.incrementAndGet();
            long witness = (long) ID.compareAndExchange(e, 0L, fresh);
            n = witness == 0 ? fresh : witness;
        }
        return n;
    }

    @Override
    public String toString() {
        long s = state;
        String life = switch ((int) (s & LIFECYCLE)) {
            case (int) NEW -> "NEW";
            case (int) RUNNING -> "RUNNING";
            case (int) SUCCEEDED -> "SUCCESS";
            case (int) FAILED -> "FAILED";
            case (int) COMPLETING -> "COMPLETING";
            default -> "CANCELLED";
        };
        StringBuilder sb = new StringBuilder("Task#").append(id());
        String name = name();
        if (name != null) {
            sb.append(' ').append(name);
        }
        sb.append('[').append(life);
        if ((s & CANCEL_REQUESTED) != 0 && !isDone()) {
            sb.append(", cancelling");
        }
        long shields = (s & SHIELD_MASK) >>> SHIELD_SHIFT;
        if (shields > 0) {
            sb.append(", shield=").append(shields);
        }
        int n = waiterCount();
        if (n > 0) {
            sb.append(", waiters=").append(n);
        }
        return sb.append(']').toString();
    }
}
