package io.weft.fiber;

import java.time.Duration;
import java.util.List;

/**
 * A snapshot of a {@link FiberIo}'s counters, made by {@link FiberIo#metrics()}: per worker, how
 * often it polled a task, took one from its LIFO slot, stole, fetched from the shared queue and
 * parked, and how long it was busy; for the whole FiberIo, tasks spawned, live, completed and
 * cancelled, the shared queue's depth and the timers armed. Counters only grow; take two
 * snapshots and subtract for rates. The counters are always on: each is a plain increment by the
 * worker that owns it (their cost is in BENCHMARKS.md).
 *
 * <p>Counts are read one by one while the workers run, so they are consistent with themselves,
 * not with each other (a task may be counted as spawned and not yet as live).
 *
 * @param io the FiberIo's name
 * @param spawned tasks spawned (submitted) since the FiberIo was built
 * @param liveTasks tasks spawned and not ended
 * @param completed tasks that ended (with a value, a failure or a cancellation)
 * @param cancelled tasks that ended cancelled, as the workers that ran them saw it (tasks run in
 *     place by an awaiter are counted by {@code completed} only), those cancelled before they
 *     started included (counted when a worker meets their queued entry)
 * @param injectorDepth tasks waiting in the shared queue (submissions from outside the workers)
 * @param timersArmed timers armed and not yet fired or cancelled
 * @param sparesStarted spare workers started because a worker stayed inside one task with work
 *     queued behind it (see {@link FiberIo.Builder#stallThreshold})
 * @param workers each worker's counters: the configured ones, then the spares made so far
 */
public record FiberMetrics(
        String io,
        long spawned,
        int liveTasks,
        long completed,
        long cancelled,
        int injectorDepth,
        int timersArmed,
        long sparesStarted,
        List<Worker> workers) {

    /**
     * One worker's counters.
     *
     * @param index the worker's number (its carrier thread is {@code <io>-worker-<index>})
     * @param polls tasks run: a task run to its end on a runner fiber, or a fiber run until it
     *     parked or yielded without ending one (a resumed task that ends is one poll; a task an
     *     awaiter ran in place is part of the awaiter's poll; a task cancelled before it started
     *     is not run), and runs of the JDK's socket pollers this FiberIo hosts
     * @param lifoHits tasks taken from the LIFO slot (the task a fiber on this worker just spawned
     *     or woke)
     * @param steals times it took work from another worker's queue
     * @param injectorBatches times it took a batch from the shared queue
     * @param parks times it parked, having found no work
     * @param busy time spent out of park (running tasks or looking for work)
     * @param localQueueDepth tasks queued on this worker now (its queue and LIFO slot)
     * @param spare whether it is a spare (started for a stalled worker; it retires when idle)
     */
    public record Worker(
            int index,
            long polls,
            long lifoHits,
            long steals,
            long injectorBatches,
            long parks,
            Duration busy,
            int localQueueDepth,
            boolean spare) {}

    /** Copies the list. */
    public FiberMetrics {
        workers = List.copyOf(workers);
    }

    /** Builds a snapshot from the scheduler's counters (see Scheduler.metrics). */
    static FiberMetrics of(String io, int configured, long[] c) {
        int n = (c.length - 5) / 8;
        Worker[] workers = new Worker[n];
        long cancelled = 0;
        for (int i = 0; i < n; i++) {
            int at = 5 + 8 * i;
            cancelled += c[at + 5];
            workers[i] = new Worker(
                    i,
                    c[at],
                    c[at + 1],
                    c[at + 2],
                    c[at + 3],
                    c[at + 4],
                    Duration.ofNanos(c[at + 6]),
                    (int) c[at + 7],
                    i >= configured);
        }
        return new FiberMetrics(
                io,
                c[0],
                (int) Math.max(0, c[0] - c[1]),
                c[1],
                cancelled,
                (int) c[2],
                (int) c[3],
                c[4],
                List.of(workers));
    }

    /**
     * Returns the polls of every worker together.
     *
     * @return the total polls
     */
    public long polls() {
        return workers.stream().mapToLong(Worker::polls).sum();
    }

    /**
     * Returns the steals of every worker together.
     *
     * @return the total steals
     */
    public long steals() {
        return workers.stream().mapToLong(Worker::steals).sum();
    }
}
