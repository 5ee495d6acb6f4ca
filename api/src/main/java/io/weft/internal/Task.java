package io.weft.internal;

import static io.weft.internal.TaskState.AWAITED;
import static io.weft.internal.TaskState.BELOW_CANCELLED;
import static io.weft.internal.TaskState.BELOW_SCOPED;
import static io.weft.internal.TaskState.CANCELLED;
import static io.weft.internal.TaskState.CANCEL_REQUESTED;
import static io.weft.internal.TaskState.COMPLETING;
import static io.weft.internal.TaskState.FAILED;
import static io.weft.internal.TaskState.HELPED;
import static io.weft.internal.TaskState.INTERRUPTED;
import static io.weft.internal.TaskState.INTERRUPTING;
import static io.weft.internal.TaskState.LIFECYCLE;
import static io.weft.internal.TaskState.NEW;
import static io.weft.internal.TaskState.OBSERVED;
import static io.weft.internal.TaskState.PLAIN_SCOPED;
import static io.weft.internal.TaskState.RUNNING;
import static io.weft.internal.TaskState.SHIELD_MASK;
import static io.weft.internal.TaskState.SHIELD_ONE;
import static io.weft.internal.TaskState.STARTED;
import static io.weft.internal.TaskState.SUCCEEDED;

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
     * State word: one volatile long; its bits, their meaning and the transitions between them are
     * TaskState's (read it first). Task makes the lifecycle's transitions (run, claimForHelper,
     * complete, requestCancel) and the shields' (which also absorb and restore INTERRUPTED);
     * CancelCheck sets BELOW_CANCELLED; CancelInterrupts sets and clears INTERRUPTING and sets
     * INTERRUPTED. All by CAS, but for the volatile write that publishes a completion claimed
     * through COMPLETING (finish).
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
     * Cancel vs a blocking JDK call (issue 13): a cancel of a task running outside a Weft suspend
     * point interrupts its thread, under the rules CancelInterrupts keeps (only while the task is
     * on top of its stack and unshielded; never left for the next task). This class's part is
     * where the task's stack changes: startAbove holds the interrupts of the task below, endAbove
     * and runHelped give them back, complete clears one left on the thread, the shields absorb
     * and restore one.
     *
     * Awaiters: the WaiterStack this class extends; complete() closes it and runs its actions.
     * Awaiting (the await loop, join helping, cycle checks), StageBridge (CompletionStage in and
     * out), TaskState (the word's layout), CancelCheck and CancelInterrupts (the cancellation
     * protocol's check and interrupts) are separate classes: this one is the task record and the
     * transitions of its lifecycle.
     *
     * Per task (spawn, run, complete, nobody parked on it): 1 allocation (the task); no
     * ScopedValue binding on a thread that owns a context slot (a runner fiber; see Context);
     * CASes: NEW -> RUNNING and RUNNING -> done; the waiter stack is only read when nobody
     * waits; no lock. The id is drawn only when a message needs it (a toString: a dump, a
     * cancelled task's signal); that, a task's first untimed await of a task not done, or its
     * first CancelScope makes its Extras (one allocation of 32 bytes, one CAS, once).
     *
     * Whether cancellation is in effect (isCancellationEffective, at every suspend point) is
     * CancelCheck's: a walk down the task's stack by definition, two state bits in the common
     * case. This class computes BELOW_SCOPED as a task starts (stackBits) and reads the parent's
     * word after publishing itself in the parent's `helping` (startAbove), CancelCheck's half of
     * the marks' handshake.
     *
     * Reference counts (the seed design's ref_count bits) are not needed: the garbage collector
     * frees a task once no queue, waiter or handle refers to it. `detached`/`join_interest` bits
     * are replaced by the awaiter stack itself.
     *
     */

    private static final AtomicLong IDS = new AtomicLong();
    /**
     * How many times a thread whose run or help of a task threw tries to settle the task, when
     * settling it meets an OutOfMemoryError of its own (failClaimedAfterEscape; FiberIo's runners).
     */
    public static final int ESCAPE_SETTLE_ATTEMPTS = 3;

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
     * For the thread whose {@link #run()}, {@link #runIn} or help of this task threw instead of
     * returning: fails the task with {@code escaped} if it has not started (what threw came before
     * the start: the task never will, here) or if it runs on the calling thread (what threw came
     * while it completed), and returns true; returns false, changing nothing, if it is done, or runs
     * on another thread (what threw was then an Io running it twice, or the task was claimed by a
     * helper meanwhile). The body's exception never escapes a run; what can is an error the JVM
     * throws (an OutOfMemoryError when the heap is full, where even entering a catch block may need
     * memory), and a task left running would keep its awaiters asleep for good.
     */
    public boolean tryFailAfterEscape(Throwable escaped) {
        while (true) {
            long s = state;
            long life = s & LIFECYCLE;
            if (life == NEW) {
                // Not complete(): between its read and its CAS a helper may claim the task, and
                // complete() takes a running task for the calling thread's own
                if (STATE.compareAndSet(this, s, (s & (CANCEL_REQUESTED | STARTED | HELPED)) | COMPLETING)) {
                    finish(s & (CANCEL_REQUESTED | STARTED | HELPED), FAILED, escaped);
                    return true;
                }
                continue;
            }
            if (life != RUNNING || thread != Thread.currentThread()) {
                return false; // done or being completed, or running elsewhere (or claimed, not yet published)
            }
            return complete(FAILED, escaped); // only this thread completes a task it runs
        }
    }

    /**
     * For the awaiter that claimed this task to run it in place ({@link #claimForHelper}) and whose
     * help threw instead of returning: fails the task with {@code escaped} unless it is done, even
     * if what threw came before the body started (the claim made it RUNNING, with no thread yet),
     * trying again a few times if failing it meets an OutOfMemoryError of its own. Left claimed,
     * the task would run nowhere and keep its other awaiters asleep for good. Only the claiming
     * thread calls it, and only after a help that threw (cold: out of Awaiting's hot path).
     */
    void failClaimedAfterEscape(Throwable escaped) {
        for (int attempt = 0; attempt < ESCAPE_SETTLE_ATTEMPTS && !isDone(); attempt++) {
            try {
                Thread runner = thread;
                if (runner == null || runner == Thread.currentThread()) { // claimed by this thread: its to end
                    complete(FAILED, escaped);
                }
                return;
            } catch (OutOfMemoryError again) {
                // try again: the memory completing needed (a deoptimization, a waiter's wake-up) may be there now
            }
        }
    }

    /**
     * After a help of {@code helped} that threw (Awaiting.tryHelp): if this task still records it
     * in {@code helping} (what threw came after startAbove recorded it, before the run that
     * endAbove closes), forgets it, so a cancel of this task interrupts it again. Cold.
     */
    void forgetHelping(Task<?> helped) {
        if (helping == helped) {
            helping = null;
        }
    }

    /**
     * The bits a task started above {@code parent} on the same stack gets with NEW -> RUNNING: its
     * inline depth, and BELOW_SCOPED if a task below it has scopes (CancelCheck, "The check's fast
     * path").
     */
    private static long stackBits(Task<?> parent) {
        long ps = parent.state;
        boolean scoped = (ps & (BELOW_SCOPED | PLAIN_SCOPED)) != 0 || parent.cancelScopes() != null;
        return TaskState.inlineDepthBits(parent.inlineDepth() + 1) | (scoped ? BELOW_SCOPED : 0);
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
        if (!TaskState.isRunningHelped(state) || thread != null) {
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
            if (interrupted || CancelInterrupts.reclaim(awaiter)) { // and what a cancel of the awaiter held back
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
        // out of line, as is endAbove: this method stays small enough to inline
        boolean startsCancelled = parent != null && startAbove(parent);
        // Published after startAbove cleared the parent's interrupt: a cancel of this task that
        // comes sooner waits for it (CancelInterrupts), so its interrupt is never cleared with the parent's
        THREAD.setRelease(this, Thread.currentThread());
        try {
            if (startsCancelled) {
                // Its awaiter's cancel came first: a blocking call of this task gives up as the
                // awaiter's own would (CancelInterrupts, "Cancel from below")
                CancelInterrupts.interruptIfCancelledBelow(this);
            }
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
            complete(
                    StageBridge.isCancellation(t) || CancelInterrupts.isInterruptFromCancel(this, t)
                            ? CANCELLED
                            : FAILED,
                    t);
        } finally {
            if (parent != null) {
                endAbove(parent);
            }
        }
    }

    /**
     * Records that this task runs above {@code parent} on the calling thread's stack, from now
     * until endAbove; returns whether it starts marked by a cancel below (BELOW_CANCELLED).
     */
    private boolean startAbove(Task<?> parent) {
        inlineParent = parent;
        parent.helping = this; // the parent's cancel no longer interrupts this thread: CancelInterrupts.hold
        if (CancelInterrupts.hold(parent)) {
            // The parent's cancel interrupted this thread (before a helper set the status aside, or
            // after): it is not this task's. The parent gets it back when this task ends (endAbove).
            Thread.interrupted();
        }
        // Read after the write of parent.helping: a cancel below that this read misses finds this
        // task in `helping` and marks it (CancelCheck)
        if ((state & HELPED) != 0 && (parent.state & (CANCEL_REQUESTED | BELOW_CANCELLED)) != 0) {
            CancelCheck.markBelowCancelled(this);
            return true;
        }
        return false;
    }

    /** After this task, run above {@code parent}, ended: {@code parent} is on top of the stack again. */
    private void endAbove(Task<?> parent) {
        parent.helping = null;
        if ((state & HELPED) == 0 && CancelInterrupts.reclaim(parent)) {
            Thread.currentThread().interrupt(); // (runHelped gives an awaiter its status back itself)
        }
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

    /** The state word now (a volatile read); see TaskState. For the cancellation protocol's classes. */
    long word() {
        return state;
    }

    /** CASes the state word from {@code expected} to {@code next}; for the cancellation protocol's classes. */
    boolean casWord(long expected, long next) {
        return STATE.compareAndSet(this, expected, next);
    }

    // ---------------------------------------------------------------- cancellation

    @Override
    public boolean cancel() {
        return requestCancel() != CancelOutcome.ALREADY_DONE;
    }

    CancelOutcome requestCancel() {
        while (true) {
            long s = state;
            if (!TaskState.isLive(s)) {
                return CancelOutcome.ALREADY_DONE; // done, or being completed by another thread
            }
            if ((s & LIFECYCLE) == NEW) {
                if (cancelNew(s)) {
                    return CancelOutcome.CANCELLED_BEFORE_START;
                }
                continue;
            }
            if ((s & CANCEL_REQUESTED) != 0) {
                if (helping != null) {
                    CancelCheck.markAbove(this); // the first canceller may not have marked them yet
                }
                return CancelOutcome.ALREADY_REQUESTED;
            }
            if (STATE.compareAndSet(this, s, s | CANCEL_REQUESTED)) {
                if (helping != null) {
                    CancelCheck.markAbove(this); // before any wake: a task above re-checks when it wakes
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
                    // through its inline parent (one side sees the other: see wakeParked), and
                    // interrupt it if it is in a blocking JDK call; an inline child, a task of its
                    // own, parks again and is not interrupted
                    wakeParked();
                    CancelInterrupts.interruptRunInPlace(this);
                } else {
                    CancelInterrupts.interruptBlockedCall(this);
                }
                return CancelOutcome.REQUESTED;
            }
        }
    }

    /** NEW -> cancelled if the state word is still {@code s}; returns whether this call did it. */
    private boolean cancelNew(long s) {
        if (STATE.compareAndSet(this, s, CANCEL_REQUESTED | COMPLETING)) {
            finish(CANCEL_REQUESTED, CANCELLED, null);
            return true;
        }
        return false;
    }

    /**
     * Cancels this task if it has not started (nor been claimed by a helper), in one step with
     * that check; returns whether it did. Thread-safe. For an Io that gives up a queued entry (its
     * runner could not start, or the Io stopped): a task an awaiter claimed meanwhile runs there,
     * and a check then a {@link #cancel()} would cancel it as it runs (and its end would be
     * counted twice: by the Io, and by the helper).
     */
    public boolean tryCancelUnstarted() {
        while (true) {
            long s = state;
            if ((s & LIFECYCLE) != NEW) {
                return false;
            }
            if (cancelNew(s)) {
                return true;
            }
        }
    }

    /**
     * Whether cancellation is in effect for this task: its own cancel, or a {@link CancelScope}
     * around it, or the cancel of an awaiter running it in place (join helping: while it runs
     * there, it is part of that awaiter), unless a shield defers it. See {@link CancelCheck}.
     */
    public boolean isCancellationEffective() {
        return CancelCheck.isEffective(this);
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
        return CancelCheck.isEffective(this, plainScopes);
    }

    /** {@link #isCancellationEffective()} as if {@code skip} (one of this task's scopes) were ended. */
    boolean isCancellationEffectiveIgnoring(CancelScope skip) {
        return CancelCheck.isEffectiveIgnoring(this, skip);
    }

    /** Throws {@link Cancelled} if this task's cancellation is in effect. */
    public void throwIfCancelled() {
        if (isCancellationEffective()) {
            Cancelled signal = CancelCheck.signal(this);
            throw signal != null ? signal : new CancelSignal(this);
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
        return TaskState.shieldDepth(state);
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
                throw new IllegalStateException("shields nested deeper than " + TaskState.shieldDepth(SHIELD_MASK));
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
                    && (s & LIFECYCLE) == RUNNING
                    && helping == null
                    && Thread.currentThread() == thread
                    && ((s & CANCEL_REQUESTED) != 0 || CancelCheck.cancelledBelow(this, s - SHIELD_ONE));
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
        if (!timeout.isPositive()) {
            throw new TimedOut(this + " was not done after " + timeout); // a look, no wait
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
        return TaskState.inlineDepth(state);
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
        return TaskState.isDone(state);
    }

    @Override
    public State state() {
        return TaskState.futureState(state);
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
    void markObserved() {
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
        return TaskState.nothingToRun(state);
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
        return describe(id(), name(), state, waiterCount());
    }

    /**
     * A task as {@link #toString} shows it: number {@code number}, named {@code name} (or null), in
     * state {@code s}, with {@code waiters} waiters.
     */
    static String describe(long number, String name, long s, int waiters) {
        String life = TaskState.lifecycleName(s);
        StringBuilder sb = new StringBuilder("Task#").append(number);
        if (name != null) {
            sb.append(' ').append(name);
        }
        sb.append('[').append(life);
        if ((s & CANCEL_REQUESTED) != 0 && !TaskState.isDone(s)) {
            sb.append(", cancelling");
        }
        int shields = TaskState.shieldDepth(s);
        if (shields > 0) {
            sb.append(", shield=").append(shields);
        }
        if (waiters > 0) {
            sb.append(", waiters=").append(waiters);
        }
        return sb.append(']').toString();
    }

    /** The action of linkCallSites' waiters. */
    private static final Runnable LINKING_ACTION = () -> {};

    /** Links the completion path's call sites when the class loads; see linkCallSites. */
    static {
        try {
            linkCallSites();
        } catch (Throwable notLinked) {
            // best effort: a class whose initializer threw could never be used again
        }
    }

    /**
     * Runs every VarHandle call site of WaiterStack's push, removeWaiter and runWaiters once, on
     * bodiless tasks of this class (WaiterStack's notes, "Linked when the class loads"): waiters
     * run on a task made done (the swap, the take, the action), then a push onto a task done while
     * nobody waited (the take-back, removeWaiter). The state is written directly, not through
     * complete(): a run of complete's claim here would be in its branch profile, and the JIT then
     * compiles the task's run differently (parked tasks measured larger with it). Last in the
     * class: every static field is set by then.
     */
    private static void linkCallSites() {
        Runnable nothing = LINKING_ACTION;
        Task<Object> awaited = new Task<>(null, null);
        awaited.push(new Waiter(nothing));
        awaited.state = SUCCEEDED;
        awaited.runWaiters();
        Task<Object> done = new Task<>(null, null);
        done.state = SUCCEEDED;
        done.push(new Waiter(nothing));
    }
}
