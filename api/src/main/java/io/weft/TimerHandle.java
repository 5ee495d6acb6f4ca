package io.weft;

/**
 * A timer armed with {@link Io#armTimer}: lets its owner cancel it before it fires. Thread-safe.
 */
public interface TimerHandle {

    /**
     * Cancels the timer if it has not fired yet; idempotent.
     *
     * @return {@code true} if this call stopped the timer from firing
     */
    boolean cancel();
}
