package io.weft.internal;

import io.weft.Io;

/**
 * What is installed for the code running now: the Io, and the task whose body it is (null on a
 * plain thread). Bound with a {@link ScopedValue}, so it is inherited by nothing implicitly:
 * {@link Task#run()} binds it anew for every task, on whatever thread runs it.
 *
 * <p>The bound value is the running {@link Task} itself in the common case (a task's Io is its
 * own), so running a task allocates no record for it; a {@code Context} is bound only by
 * {@link Io#with(Io)}, which may install an Io other than the current task's.
 *
 * @param io the installed Io, or null when none was bound
 * @param task the current task, or null outside any task
 */
public record Context(Io io, Task<?> task) {

    /** A Task (its own Io installed) or a Context. */
    private static final ScopedValue<Object> CURRENT = ScopedValue.newInstance();
    /** What {@code CURRENT} reads as when unbound (ScopedValue.orElse refuses null). */
    private static final Object NONE = new Object();

    /** Returns the installed Io, or null if none was bound on this thread or task. */
    public static Io currentIo() {
        Object current = CURRENT.orElse(NONE);
        if (current instanceof Task<?> task) {
            return task.io();
        }
        return current instanceof Context context ? context.io : null;
    }

    /**
     * Returns the task running this code, or null on a plain thread. A thread that inherited a
     * task's binding without running its body (a {@code StructuredTaskScope} fork inherits scoped
     * values) is not in that task: it gets null, keeps the installed Io, and waits as a plain
     * thread, so it never touches the task's park slot, shield depth or await record.
     */
    public static Task<?> currentTask() {
        Object current = CURRENT.orElse(NONE);
        Task<?> task = current instanceof Task<?> t ? t : current instanceof Context context ? context.task : null;
        return task != null && task.runsOn(Thread.currentThread()) ? task : null;
    }

    /** Returns a carrier that installs {@code io} and keeps the current task. */
    public static ScopedValue.Carrier with(Io io) {
        return ScopedValue.where(CURRENT, new Context(io, currentTask()));
    }

    /** Returns a carrier that makes {@code task} current, with its own Io installed. */
    static ScopedValue.Carrier forTask(Task<?> task) {
        return ScopedValue.where(CURRENT, task);
    }
}
