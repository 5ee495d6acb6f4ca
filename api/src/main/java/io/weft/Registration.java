package io.weft;

/**
 * A callback registered with {@link Future#onDone}: closing it deregisters the callback if it has
 * not run yet. Thread-safe and idempotent.
 */
public interface Registration extends AutoCloseable {

    /** Deregisters the callback; it will not run if it has not started. Idempotent. */
    @Override
    void close();
}
