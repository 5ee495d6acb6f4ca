package io.weft.internal;

import io.weft.Io;

/**
 * What is installed for the code running now: the Io, and the task whose body it is (null on a
 * plain thread). Bound with a {@link ScopedValue}, so it is inherited by nothing implicitly:
 * {@link Task#run()} binds it anew for every task, on whatever thread runs it.
 *
 * @param io the installed Io, or null when none was bound
 * @param task the current task, or null outside any task
 */
public record Context(Io io, Task<?> task) {

    private static final ScopedValue<Context> CURRENT = ScopedValue.newInstance();
    private static final Context NONE = new Context(null, null);

    /** Returns the installed Io, or null if none was bound on this thread or task. */
    public static Io currentIo() {
        return CURRENT.orElse(NONE).io;
    }

    /** Returns the task running this code, or null on a plain thread. */
    public static Task<?> currentTask() {
        return CURRENT.orElse(NONE).task;
    }

    /** Returns a carrier that installs {@code io} and keeps the current task. */
    public static ScopedValue.Carrier with(Io io) {
        return ScopedValue.where(CURRENT, new Context(io, currentTask()));
    }

    /** Returns a carrier that installs {@code io} with {@code task} as the current task. */
    static ScopedValue.Carrier forTask(Io io, Task<?> task) {
        return ScopedValue.where(CURRENT, new Context(io, task));
    }
}
