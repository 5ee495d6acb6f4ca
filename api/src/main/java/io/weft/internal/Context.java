package io.weft.internal;

import io.weft.Io;
import java.util.concurrent.Callable;

/**
 * What is installed for the code running now: the Io, and the task whose body it is (null on a
 * plain thread). Found through a {@link ScopedValue}, so it is inherited by nothing implicitly
 * except what the JDK inherits on purpose (a {@code StructuredTaskScope} fork), and a fork is
 * never inside its parent's task.
 */
public final class Context {
    /*
     * Implementation notes.
     *
     * One ScopedValue, SLOT, holds a Slot: a mutable cell owned by one thread, whose `current`
     * is the running Task (its own Io installed) or a Frame (an Io installed by Io.with, and the
     * task that was current when it was bound). Running a task does not bind anything when the
     * thread already owns a slot: Task.run saves `current`, writes itself, and restores it after
     * (a plain field, only the owner writes it). A thread that runs many tasks (a FiberIo
     * runner fiber) binds one slot for its whole life (newThreadSlot, bind) and hands it to each
     * task it runs (Task.runIn), which spares the lookup; a plain thread binds one
     * around its outermost task or Io.with call, and tasks nested inside reuse it.
     *
     * Task.runClaimed does the save/write/restore itself, so no frame of Context's sits under a
     * task's body: every frame there is in every parked task's stack chunk.
     *
     * Why not a binding per task: a binding costs two allocations (Carrier, Snapshot), it
     * invalidated the thread's ScopedValue cache, so the next lookup walked the bindings and
     * refilled the cache (about 15% of a trivial task's spawn-run-complete, measured by JFR on
     * spawn_many_local, before lookups read the innermost binding directly, below), and it adds
     * the JDK's ScopedValue call frames to every parked task's stack.
     *
     * Io.with binds a new slot (it is rare, and a new binding is what a StructuredTaskScope
     * forked inside it must inherit). A thread that is not a slot's owner (a fork inheriting its
     * parent's binding) sees no current task, and the Io of whatever its owner runs; running a
     * task there binds the fork's own slot, so a fork never writes its parent's cell.
     *
     * Lookups read the thread's innermost binding directly when it is SLOT's (InnermostBinding),
     * which it is on a runner fiber and inside Io.with: the JDK's scoped-value cache, an
     * Object[32] kept by every thread that ever found a binding through it, is then never made
     * (144 bytes per parked task on FiberIo). Otherwise (a user's binding innermost, java.lang
     * not open) the lookup goes through ScopedValue, cache and all.
     *
     * Per lookup: four field reads (or one ScopedValue read, a cache hit once warm) and a field
     * read; per task run on a thread that owns a slot: two plain writes, no allocation, no binding.
     */

    private static final ScopedValue<Slot> SLOT = ScopedValue.newInstance();
    /** What {@link #slot()} returns when SLOT is unbound: owned by no thread, empty. */
    private static final Slot NONE = new Slot(null, null);

    /**
     * A thread's cell: what its running code has installed. Written only by {@link #owner}.
     * Public only so that an Io can hold one unopened: a {@link HelpsAwaiters} hands it on from an
     * awaiter to the task it runs in place (one lookup per help instead of two), and a thread
     * that runs many tasks makes and binds one for its life and hands it to each task
     * ({@link #newThreadSlot}, {@link #bind}, {@link Task#runIn}); its members are not.
     * Not thread-safe: only its owner writes it.
     */
    public static final class Slot {
        final Thread owner;
        /** A Task, a Frame, or null. */
        Object current;

        Slot(Thread owner, Object current) {
            this.owner = owner;
            this.current = current;
        }
    }

    /** An Io installed by {@link Io#with(Io)} over the task that was current then (or null). */
    private record Frame(Io io, Task<?> task) {}

    private Context() {}

    /**
     * The slot bound for this thread (its own or inherited), or NONE: read from the thread's
     * innermost binding when that is SLOT's (InnermostBinding: no ScopedValue cache), else
     * through ScopedValue's own lookup.
     */
    static Slot slot() {
        Object innermost = InnermostBinding.valueOf(SLOT);
        return innermost != null ? (Slot) innermost : SLOT.orElse(NONE);
    }

    /** Returns the installed Io, or null if none was bound on this thread or task. */
    public static Io currentIo() {
        return ioIn(slot());
    }

    /**
     * Returns the task running this code, or null on a plain thread. A thread that inherited a
     * task's binding without running its body (a {@code StructuredTaskScope} fork inherits scoped
     * values) is not in that task: it gets null, keeps the installed Io, and waits as a plain
     * thread, so it never touches the task's park slot, shield depth or await record.
     */
    public static Task<?> currentTask() {
        return taskIn(slot());
    }

    /** The installed Io as {@code slot} says, or null; see {@link #currentIo()}. */
    static Io ioIn(Slot slot) {
        Object current = slot.current;
        if (current instanceof Task<?> task) {
            return task.io();
        }
        return current instanceof Frame frame ? frame.io : null;
    }

    /** The current task as {@code slot}, what {@link #slot()} returned on this thread, says. */
    static Task<?> taskIn(Slot slot) {
        if (slot.owner != Thread.currentThread()) {
            return null;
        }
        Object current = slot.current;
        return current instanceof Task<?> task ? task : current instanceof Frame frame ? frame.task : null;
    }

    /** Calls {@code body} with {@code io} installed over the current task (kept current). */
    public static <T> T with(Io io, Callable<T> body) {
        return ScopedValue.where(SLOT, new Slot(Thread.currentThread(), new Frame(io, currentTask())))
                .call(() -> Unchecked.call(body));
    }

    /**
     * Returns a new slot of the calling thread's own, with nothing current, for {@link #bind}. For
     * a thread that runs many tasks one after another (a runner fiber), which keeps the slot to
     * hand it to {@link Task#runIn} without looking it up.
     */
    public static Slot newThreadSlot() {
        return new Slot(Thread.currentThread(), null);
    }

    /**
     * Returns a binding of {@code slot} (made by {@link #newThreadSlot} on this thread): code run
     * inside it (the carrier's {@code run}) reuses the slot for every task it runs instead of
     * binding one; the caller runs its loop through the carrier itself, so no frame of Context's
     * stays under its tasks.
     */
    public static ScopedValue.Carrier bind(Slot slot) {
        return ScopedValue.where(SLOT, slot);
    }

    /** Calls {@code task}'s body ({@link Task#call()}) in a slot bound for the call, owned by this thread. */
    static <T> T bindAndCall(Task<T> task) throws Exception {
        return ScopedValue.where(SLOT, new Slot(Thread.currentThread(), task)).call(task);
    }
}
