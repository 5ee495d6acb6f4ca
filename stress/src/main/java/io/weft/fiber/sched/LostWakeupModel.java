package io.weft.fiber.sched;

/**
 * A model of the parking protocol of {@link IdleWorkers}: worker 0 of a scheduler finds no work
 * and parks, while a thread outside the workers submits one task. Thread-safe for exactly one
 * worker thread ({@link #runWorker()}) and one producer thread ({@link #submit()}).
 *
 * <p>The worker side is {@code Worker.run}, {@code nextTask}, {@code runTask} and {@code park};
 * the producer side is {@code Scheduler.execute} from a foreign thread and
 * {@code Scheduler.notifyParked}. They use the real {@link IdleWorkers}, {@link Injector} and
 * {@link Parker}, and keep every step of the real code that touches the state the race is about,
 * in the same order. Left out, because they change nothing here: the LIFO slot and the local
 * {@link RunQueue} (the task arrives in the Injector, as a foreign thread's does, and they stay
 * empty), the other workers' queues (empty: a steal finds nothing), timers, stopping, and the
 * spin before parking (off when {@code spinBeforeParking} is false or the clock is virtual; it
 * only adds early looks at the queues, which would narrow the race, not widen it).
 *
 * <p>One deliberate difference: the real worker parks for at most 10 ms, which would turn a lost
 * wake-up into a 10 ms delay the test cannot see. Here worker 0 parks without a timeout, so a lost
 * wake-up leaves it parked for good and jcstress reports it as STALE.
 *
 * <p>With two workers, worker 1 is running a task of its own for the whole test: unparked, not
 * searching, never looking at the queues. Worker 0 then becomes a searcher before parking (as
 * {@code Worker.steal} makes it), so the producer takes the fast path "a searcher exists, it will
 * find the task", and worker 0's duty as the last searcher is all that stands between the task
 * and a lost wake-up. With one worker the producer's fast path is "nobody is parked", and the
 * worker's re-check when it is the last unparked worker covers it.
 */
final class LostWakeupModel {
    /*
     * Implementation notes.
     *
     * Why the real protocol terminates (Dekker, all accesses to IdleWorkers' state sequentially
     * consistent): the producer pushes, then reads the state; worker 0 writes the state in
     * transitionToParked, then (as last searcher, or last unparked worker) reads the Injector.
     * Either the producer sees worker 0 counted as parked and not searching, and wakes it (the
     * Parker keeps the notification if worker 0 is not asleep yet), or worker 0's re-check sees
     * the task and wakes a worker itself: worker 0, the only parked one.
     *
     * The mutant (recheck == false) skips that re-check, the bug a "last searcher must notify"
     * rule exists to prevent: the producer's read that came before transitionToParked saw
     * "nobody parked" or "a searcher exists" and woke nobody, and worker 0 sleeps forever.
     */

    /** The worker this model runs; with two workers, worker 1 is busy elsewhere. */
    private static final int WORKER = 0;
    /** How far the start of the two sides is spread (see StartLine). */
    private static final int JITTER_SPINS = 8;

    private static final Runnable TASK = () -> {};

    private final int workers;
    private final boolean recheck;
    private final IdleWorkers idle;
    private final Parker[] parkers;
    private final Injector injector = new Injector();
    private final StartLine start = new StartLine();
    /** Worker 0's Worker.searching; worker thread only. */
    private boolean searching;

    private LostWakeupModel(int workers, boolean recheck) {
        this.workers = workers;
        this.recheck = recheck;
        this.idle = new IdleWorkers(workers);
        this.parkers = new Parker[workers];
        for (int i = 0; i < workers; i++) {
            parkers[i] = new Parker();
        }
    }

    /**
     * The protocol as Worker and Scheduler run it.
     *
     * @param workers the number of workers, 1 or 2
     * @return a model whose worker 0 is about to look for work
     */
    static LostWakeupModel of(int workers) {
        return new LostWakeupModel(workers, true);
    }

    /**
     * The mutant: a parking worker that skips the re-check of the queues after
     * {@link IdleWorkers#transitionToParked}. Only for showing that the test can fail.
     *
     * @param workers the number of workers, 1 or 2
     * @return a model whose worker 0 will lose wake-ups
     */
    static LostWakeupModel skippingRecheck(int workers) {
        return new LostWakeupModel(workers, false);
    }

    /**
     * Worker 0's loop: find work or park, until it has taken the task. Returns only after taking
     * the task; parks without a timeout.
     */
    void runWorker() {
        parkers[WORKER].bind(Thread.currentThread()); // Worker.run: the carrier binds itself
        start.await();
        StartLine.jitter(JITTER_SPINS);
        while (true) {
            Runnable task = nextTask();
            if (task != null) {
                runTask();
                return;
            }
            park();
        }
    }

    /** Worker.nextTask with the LIFO slot and the local queue empty. */
    private Runnable nextTask() {
        Runnable task = injector.pop();
        if (task != null) {
            return task;
        }
        steal();
        return injector.pop();
    }

    /** Worker.steal: only a searcher steals, and worker 1's queue is empty. */
    private void steal() {
        if (workers == 1 || searching) {
            return;
        }
        if (idle.tryBecomeSearcher()) {
            searching = true;
        }
    }

    /** Worker.runTask up to running the task: a searcher that found work may have to wake another. */
    private void runTask() {
        if (searching) {
            searching = false;
            if (idle.transitionFromSearching()) {
                notifyParked();
            }
        }
    }

    /** Worker.park, without a timeout. */
    private void park() {
        boolean wasSearching = searching;
        searching = false;
        boolean lastSearcher = idle.transitionToParked(WORKER, wasSearching);
        if (recheck && (lastSearcher || idle.unparked() == 0)) {
            if (!injector.isEmpty()) { // Scheduler.isWorkPending: queues and LIFO slots are empty
                notifyParked();
            }
        }
        parkers[WORKER].park(Long.MAX_VALUE);
        if (!idle.unparkWorkerById(WORKER)) {
            searching = true; // a notifier took worker 0 out of the parked set, counted searching
        }
    }

    /** The producer: Scheduler.execute from a thread that is not a worker. */
    void submit() {
        start.open();
        StartLine.jitter(JITTER_SPINS);
        injector.push(TASK);
        notifyParked();
    }

    /** Scheduler.notifyParked. */
    private void notifyParked() {
        int worker = idle.workerToNotify();
        if (worker >= 0) {
            parkers[worker].unpark();
        }
    }
}
