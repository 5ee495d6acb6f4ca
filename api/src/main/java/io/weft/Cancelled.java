package io.weft;

import java.util.concurrent.CancellationException;

/**
 * Thrown at a suspend point of a cancelled task, and by {@link Future#await()} on a cancelled
 * future. It is the signal that makes a cancelled task unwind; catching it without rethrowing
 * does not undo the cancellation (the next suspend point throws again).
 *
 * <p>The one a suspend point throws has no stack trace, unless the JVM runs with {@code
 * -Dio.weft.cancelledStackTraces=true}: it is control flow, and where it is thrown (the task's
 * suspend point) does not say who cancelled the task.
 */
public class Cancelled extends CancellationException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the signal with a message saying what was cancelled.
     *
     * @param message what was cancelled
     */
    public Cancelled(String message) {
        super(message);
    }

    /**
     * Creates the signal with a message and the cancellation it reports (for example, the
     * {@code Cancelled} that unwound the awaited task).
     *
     * @param message what was cancelled
     * @param cause the original cancellation, may be null
     */
    @SuppressWarnings("this-escape") // only a subclass overriding initCause could see a partial object
    public Cancelled(String message, Throwable cause) {
        super(message);
        if (cause != null) {
            initCause(cause);
        }
    }
}
