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
     * String and the concatenation) cost 2.1-2.8 KB per 100 races of Futures.race (BENCHMARKS.md,
     * twenty-second session). The signal keeps what the text shows, taken when it is made: the
     * task's number (drawn then if it had none, so the text names the task its toString names),
     * its name and its state word; the waiters' count, which is not in the word, is left out. It
     * keeps no reference to the task: a signal outlives its task as the cause of what await
     * throws, in logs and in futures' outcomes, and the task would keep its thread and the tasks
     * it ran on reachable. The first read stores the text in a plain field: two threads reading
     * at once may both build it, and get equal strings (a String is safe to publish through a
     * race). What reads Throwable's own message field, not getMessage (JFR's exception events,
     * -Xlog:exceptions), sees none.
     */

    private static final long serialVersionUID = 2L;

    /** Whether signals fill in their stack trace; read once, from the system property. */
    private static final boolean STACK_TRACES = Boolean.getBoolean("io.weft.cancelledStackTraces");

    /** The cancelled task's number (numbers start at 1); 0 for a scope's signal. */
    private final long number;

    /** The cancelled task's name, or null. */
    private final String name;

    /** The cancelled task's state word when the signal was made. */
    private final long state;

    /** The message; null until its first read (see the notes). */
    private transient String message;

    /**
     * Creates the signal for {@code task}'s own cancellation (or an awaiter's, for a task run in
     * place), as the task is now.
     *
     * @param task the cancelled task
     */
    CancelSignal(Task<?> task) {
        super(null);
        this.number = task.number();
        this.name = task.name();
        this.state = task.word();
    }

    /**
     * Creates the signal for a cancelled {@link CancelScope}.
     *
     * @param why the scope's cause (a timeout, or what its cancel was given)
     */
    CancelSignal(Throwable why) {
        super(null, why);
        this.number = 0;
        this.name = null;
        this.state = 0;
    }

    @Override
    public String getMessage() {
        String m = message;
        if (m == null) {
            m = number != 0
                    ? Task.describe(number, name, state, 0) + " was cancelled"
                    : "the scope around this code was cancelled: " + getCause();
            message = m;
        }
        return m;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return STACK_TRACES ? super.fillInStackTrace() : this;
    }
}
