package io.weft.fiber.sched;

/**
 * A task that has not started: what run queues hold for a spawn, instead of a thread. It gets a
 * fiber (a {@link Runner}'s virtual thread) only when a worker runs it, and keeps that fiber until
 * it ends. Thread-safe: submitted once, then run or abandoned exactly once by the scheduler.
 */
public abstract class Job implements Runnable {

    /** For subclasses. */
    protected Job() {}

    /**
     * Runs the task to completion on the calling fiber. Never throws: the task carries its own
     * error handling. Called at most once, and only on a runner fiber of the scheduler.
     */
    @Override
    public abstract void run();

    /**
     * Settles a task that will never run because the scheduler stopped with it still queued
     * (cancels it, so nothing waits for it forever). Called at most once, instead of {@link #run()}.
     */
    public abstract void abandon();
}
