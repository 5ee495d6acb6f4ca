package io.weft;

/**
 * Thrown by a timed wait, such as {@link Future#await(java.time.Duration)}, whose time ran out on
 * the Io's clock. Unchecked, like every Weft signal. A timed wait does not cancel what it
 * awaited; the operations that run work under a deadline ({@code Futures.timeout},
 * {@code Scope.call} with a timeout) cancel that work before they throw it.
 */
public class TimedOut extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the signal with a message saying what timed out.
     *
     * @param message what timed out, and after how long
     */
    public TimedOut(String message) {
        super(message);
    }
}
