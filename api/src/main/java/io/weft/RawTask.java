package io.weft;

/**
 * What {@link Io#spawnRaw} runs: one task, to be run exactly once. Made by {@link Io#async};
 * an Io implementation only runs it, and may cancel it (for example, when the Io shuts down).
 * Thread-safe.
 */
public interface RawTask extends Runnable {

    /**
     * Runs the task's body to completion on the calling thread and completes its future. The
     * body's exception becomes the future's failure; it does not escape. A task cancelled before
     * it starts completes as cancelled without running its body.
     *
     * @throws IllegalStateException if the task was already started (an Io running it twice)
     */
    @Override
    void run();

    /**
     * Requests the task's cancellation, with the rules of {@link Future#cancel()}.
     *
     * @return {@code false} if the task is already done
     */
    boolean cancel();

    /**
     * Returns whether the task is done.
     *
     * @return {@code true} once done
     */
    boolean isDone();
}
