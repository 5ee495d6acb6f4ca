package io.weft.fiber.sched;

import java.util.concurrent.locks.LockSupport;

/**
 * The body of a runner fiber: a virtual thread of the scheduler that runs {@link Job}s one after
 * another, on whatever worker it is mounted on. Only its own thread runs {@link #run()}; a worker
 * hands it a job with {@link #assign}.
 */
final class Runner implements Runnable {
    /*
     * Implementation notes.
     *
     * Life of a runner (DESIGN §4, "tasks before threads"):
     *   1. A worker's loop takes a Job and has no fiber to run it on: it takes an idle runner from
     *      its pool (assign: write `assigned`, unpark) or builds a new one, and runs the runner's
     *      continuation at once (Scheduler.execute captures it on that worker's own thread).
     *   2. The runner runs the job. If the job suspends, the runner suspends with it: a task keeps
     *      its thread until it ends.
     *   3. When the job ends, the runner resets what the job may have left on the thread (below)
     *      and asks its current worker for the next piece of work (Worker.nextForRunner, pinned to
     *      the carrier). A Job runs right here, without unmounting: a task that never suspends
     *      costs a queue pop and a call. Anything else (a resumed fiber's continuation, or
     *      nothing) is handed to the worker's loop, and the runner parks in the worker's idle pool
     *      (or ends, when the pool is full or the scheduler stopped).
     * Work is taken in the worker's usual order, so a resumed fiber queued before a stream of new
     * tasks runs before them: runners do not starve continuations.
     *
     * Isolation between the tasks of one runner: after each job the runner clears its interrupt
     * status, drops every ThreadLocal and InheritableThreadLocal value, and restores its name,
     * context class loader and uncaught-exception handler if the job changed them. ScopedValue
     * bindings need nothing: a task's bindings end with its call. Thread.currentThread() is the
     * runner's thread for the whole life of a task; the same thread may run later tasks, as in
     * any pool.
     *
     * Stray wake-ups: a token of an earlier task readied late unparks this thread (ParkToken's
     * owner is the thread). A job's park loop re-checks its own token; the idle loop re-checks
     * `assigned`. A stray wake-up of an idle runner resumes it on some worker, where it parks again
     * without re-entering any pool; if its worker assigns it a job meanwhile, it runs that job
     * where it is (the worker finds no continuation to run and goes on).
     *
     * `assigned` is volatile: written by the assigning worker (which removed the runner from its
     * pool, so one writer at a time) before unpark, read and cleared by the runner.
     */

    /** Ends an idle runner (the scheduler is stopping). */
    static final Job STOP = new Job() {
        @Override
        public void run() {}

        @Override
        public void abandon() {}
    };

    private final Scheduler scheduler;
    private volatile Job assigned;
    /** The runner's thread, set once before it starts. */
    Thread thread;
    private String name;
    private ClassLoader loader;
    private Thread.UncaughtExceptionHandler handler;

    Runner(Scheduler scheduler, Job first) {
        this.scheduler = scheduler;
        this.assigned = first;
    }

    /** Hands {@code job} to this idle runner and wakes it; called by the worker that took it from its pool. */
    void assign(Job job) {
        assigned = job;
        LockSupport.unpark(thread);
    }

    @Override
    public void run() {
        Thread self = Thread.currentThread();
        name = self.getName();
        loader = self.getContextClassLoader();
        handler = Carriers.ownHandler(self);
        Job job = takeAssigned();
        while (job != null) {
            try {
                job.run();
            } catch (Throwable t) { // a Job does not throw; if one does, it must not end the runner silently
                Scheduler.reportUncaught(t);
            }
            reset(self);
            job = scheduler.nextForRunner(this);
            if (job == null) {
                job = awaitAssignment();
            } else if (job == STOP) {
                return;
            }
        }
    }

    /** Parks until a worker assigns a job; returns it, or null if told to stop. */
    Job awaitAssignment() {
        Job job;
        while ((job = assigned) == null) {
            LockSupport.park(this);
            Thread.interrupted(); // an idle runner has no task to interrupt; do not spin on the flag
        }
        assigned = null;
        return job == STOP ? null : job;
    }

    private Job takeAssigned() {
        Job job = assigned;
        assigned = null;
        return job == STOP ? null : job;
    }

    /** Forgets what the last job left on this thread. */
    private void reset(Thread self) {
        Thread.interrupted();
        Carriers.forgetThreadLocals(self, handler);
        if (self.getName() != name) {
            self.setName(name);
        }
        if (self.getContextClassLoader() != loader) {
            self.setContextClassLoader(loader);
        }
    }

    @Override
    public String toString() {
        Thread t = thread;
        return "Runner[" + (t == null ? "unstarted" : t.toString()) + "]";
    }
}
