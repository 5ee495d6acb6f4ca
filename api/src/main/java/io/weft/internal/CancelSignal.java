package io.weft.internal;

import io.weft.Cancelled;

/**
 * The {@link Cancelled} that a suspend point throws in a task whose own cancellation (or an
 * awaiter's, for a task run in place) is in effect: the signal that unwinds the task. Immutable.
 *
 * <p>It has no stack trace unless the JVM runs with {@code -Dio.weft.cancelledStackTraces=true}.
 * Cancellation is control flow: a race's loser, a scope's children or a timed-out task unwinds
 * with it, and where it was thrown is the task's suspend point, which says nothing about who
 * cancelled it. Walking the stack cost more than the rest of a cancelled task's unwinding (9% of
 * the CPU samples of a race loop whose losers started and slept). kotlinx.coroutines makes the
 * same choice for its cancellation exceptions, with a debug switch to bring the traces back.
 */
final class CancelSignal extends Cancelled {
    private static final long serialVersionUID = 1L;

    /** Whether signals fill in their stack trace; read once, from the system property. */
    private static final boolean STACK_TRACES = Boolean.getBoolean("io.weft.cancelledStackTraces");

    /**
     * Creates the signal.
     *
     * @param message what was cancelled
     */
    CancelSignal(String message) {
        super(message);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return STACK_TRACES ? super.fillInStackTrace() : this;
    }
}
