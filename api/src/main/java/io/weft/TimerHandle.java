package io.weft;

/**
 * A timer armed with {@link Io#armTimer}: lets its owner cancel it before it fires. Thread-safe.
 */
public interface TimerHandle {

    /**
     * Cancels the timer if it has not fired yet; idempotent. An Io's handle answers exactly:
     * {@code false} means the timer already fired (its deadline passed, by the Io's own rule) or
     * was cancelled before, never "perhaps". Timed waits rely on it: a wait whose cancel returns
     * {@code false} has lasted its timeout.
     *
     * @return {@code true} if this call stopped the timer from firing
     */
    boolean cancel();
}
