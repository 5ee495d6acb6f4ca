package io.weft.internal;

import io.weft.Cancelled;

/**
 * The {@link Cancelled} that a suspend point throws where a cancellation is in effect: a task's
 * own (or an awaiter's, for a task run in place), or a {@link CancelScope}'s. It is the signal
 * that unwinds the task or the scope. Immutable, but for the message it builds on first read.
 *
 * <p>It has no stack trace unless the JVM runs with {@code -Dio.weft.cancelledStackTraces=true}.
 * Cancellation is control flow: a race's loser, a scope's children or a timed-out task unwinds
 * with it, and where it was thrown is the task's suspend point, which says nothing about who
 * cancelled it. Walking the stack cost more than the rest of a cancelled task's unwinding (9% of
 * the CPU samples of a race loop whose losers started and slept). kotlinx.coroutines makes the
 * same choice for its cancellation exceptions, with a debug switch to bring the traces back.
 */
final class CancelSignal extends Cancelled {
    /*
     * Implementation notes.
     *
     * The message is built on its first read, not when the signal is made. A race's loser, a
     * scope's children and every timed-out task make one, and almost none is ever read: building
     * "Task#12 [running, cancelling] was cancelled" at once (a StringBuilder, its growth, the
     * String, the concatenation, and the task's id drawn from the shared counter if it had none)
     * cost 1.3-3 KB per 100 races of Futures.race (BENCHMARKS.md, twenty-second session). What
     * the message shows is fixed when the signal is made: the task and its state word then (a
     * later read does not see a later state); the waiters' count, which is not in the word, is
     * left out. The first read stores the text in a plain field: two threads reading at once may
     * both build it, and get equal strings (a String is safe to publish through a race).
     * Serialization writes the text, not the task.
     */

    private static final long serialVersionUID = 2L;

    /** Whether signals fill in their stack trace; read once, from the system property. */
    private static final boolean STACK_TRACES = Boolean.getBoolean("io.weft.cancelledStackTraces");

    /** The cancelled task; null for a scope's signal and after deserialization. */
    private final transient Task<?> task;

    /** The task's state word when the signal was made. */
    private final transient long state;

    /** The message; null until its first read (see the notes). */
    private String message;

    /**
     * Creates the signal for {@code task}'s own cancellation (or an awaiter's, for a task run in
     * place), as the task is now.
     *
     * @param task the cancelled task
     */
    CancelSignal(Task<?> task) {
        super(null);
        this.task = task;
        this.state = task.word();
    }

    /**
     * Creates the signal for a cancelled {@link CancelScope}.
     *
     * @param why the scope's cause (a timeout, or what its cancel was given)
     */
    CancelSignal(Throwable why) {
        super(null, why);
        this.task = null;
        this.state = 0;
    }

    @Override
    public String getMessage() {
        String m = message;
        if (m == null) {
            m = task != null
                    ? task.describe(state, false) + " was cancelled"
                    : "the scope around this code was cancelled: " + getCause();
            message = m;
        }
        return m;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return STACK_TRACES ? super.fillInStackTrace() : this;
    }

    @java.io.Serial
    private void writeObject(java.io.ObjectOutputStream out) throws java.io.IOException {
        getMessage(); // the text goes, the task does not
        out.defaultWriteObject();
    }
}
