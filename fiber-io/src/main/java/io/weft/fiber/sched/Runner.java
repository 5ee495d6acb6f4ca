package io.weft.fiber.sched;

import io.weft.RawTask;
import io.weft.internal.Context;
import io.weft.internal.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The body of a runner fiber: a virtual thread of the scheduler that runs jobs (spawned tasks,
 * {@link RawTask}s) one after another, on whatever worker it is mounted on. Only its own thread
 * runs {@link #run()}; a worker hands it a job with {@link #assign}.
 */
final class Runner implements Runnable {
    /*
     * Implementation notes.
     *
     * Life of a runner (DESIGN §4, "tasks before threads"):
     *   1. A worker's loop takes a job (a RawTask) and has no fiber to run it on: it takes an idle runner from
     *      its pool (assign: write `assigned`, unpark) or builds a new one, and runs the runner's
     *      continuation at once (Scheduler.execute captures it on that worker's own thread).
     *   2. The runner runs the job. If the job suspends, the runner suspends with it: a task keeps
     *      its thread until it ends.
     *   3. When the job ends, the runner resets what the job may have left on the thread (below)
     *      and asks its current worker for the next piece of work (Worker.nextForRunner, pinned to
     *      the carrier). A job runs right here, without unmounting: a task that never suspends
     *      costs a queue pop and a call. Anything else (a resumed fiber's continuation, or
     *      nothing) is handed to the worker's loop, and the runner parks in the worker's idle pool
     *      (or ends, when the pool is full or the scheduler stopped). After JOBS_PER_RUNNER
     *      jobs it ends instead, and the worker's loop finds the next work itself (below).
     * Work is taken in the worker's usual order, so a resumed fiber queued before a stream of new
     * tasks runs before them: runners do not starve continuations.
     *
     * Isolation between the tasks of one runner: after each job the runner clears its interrupt
     * status, drops every ThreadLocal and InheritableThreadLocal value, and restores its name,
     * context class loader and uncaught-exception handler if the job changed them. ScopedValue
     * bindings need nothing: a task's bindings end with its call, and the context slot the runner binds
     * once (Context.newThreadSlot, bind; each job runs in it through Task.runIn, with no lookup)
     * is restored by each task as it ends. Thread.currentThread() is the
     * runner's thread for the whole life of a task; the same thread may run later tasks, as in
     * any pool.
     *
     * Stray wake-ups: a token of an earlier task readied late unparks this thread (ParkToken's
     * owner is the thread). A job's park loop re-checks its own token; the idle loop re-checks
     * `assigned`. A stray wake-up of an idle runner resumes it on some worker, where it parks again
     * without re-entering any pool; if its worker assigns it a job meanwhile, it runs that job
     * where it is (the worker finds no continuation to run and goes on). They are common: a task
     * that interrupts its own thread leaves a park permit behind (a virtual thread's interrupt
     * unparks it), which the reset's clearing of the status does not take back.
     *
     * Parked on the carrier: an idle runner's park that cannot unmount (the JDK's freeze of its
     * stack needs memory, and with the heap full VirtualThread.park parks the carrier instead)
     * holds its worker's carrier, and only that worker would assign it a job: the worker stands
     * still for good (seen in an out-of-memory probe: both workers so). On every pass, the stall
     * watch unparks such a runner of any worker (Scheduler.wakeRunnersParkedOnCarriers; an unpark
     * of a thread parked on its carrier allocates nothing), `leave` set first. Woken so
     * with nothing assigned, on its pool's worker, the runner leaves the pool and ends
     * (Worker.leaveIdlePool: that worker runs it, so it cannot be taking the runner from its pool
     * meanwhile), and the worker's loop goes on; on another worker it parks again, as after a
     * stray wake-up. The watch ends with a stop, so stop() does the same while it waits for the
     * workers (and a scheduler on a virtual clock, or with no stall threshold, has no watch: there
     * only a stop does). Not covered: a runner woken by a stray wake-up resumes on another worker
     * and parks again there, on that worker's carrier, while it sits in its own worker's pool;
     * with the heap full that park too can fail to unmount, and neither worker's check finds it
     * (it is not in the pool of the worker whose carrier it holds), so that worker waits until the
     * runner's own worker assigns it a job. A `leave` left set (the watch's wrong pick) makes an
     * idle runner end at its next stray wake-up on its pool's worker: harmless.
     *
     * `assigned` is volatile: written by the assigning worker (which removed the runner from its
     * pool, so one writer at a time) before unpark, read and cleared by the runner.
     *
     * Ending: a runner whose loop throws (an error the scheduler's own code threw, with the heap
     * full: a job's failure is caught in the loop) may end while it sits in its worker's idle pool.
     * The worker later takes it from the pool and assigns it a job; the unpark of an ended thread
     * does nothing, and no continuation comes back to run. So, as its loop is over (thrown or not),
     * the runner sets `ended` (volatile), then takes `assigned` back with a getAndSet and settles
     * what it finds (Scheduler.discard). The worker, when no continuation came back after an
     * assign (startJob), reads `ended` after its volatile store of `assigned`: if set, it CASes
     * the job back out (tryReclaimIfEnded) and starts it on another runner. Store then load on both
     * sides: either the worker sees `ended` (then exactly one of the CAS and the getAndSet gets the
     * job), or the runner's getAndSet comes after the worker's store and gets the job. Never both,
     * never neither. A runner that ends normally is in no pool (nextForRunner returned STOP, or it
     * left the pool), so it finds nothing; an ended runner's leftover STOP is ignored. Cost: a
     * volatile store and an RMW per runner (one in 4,096 jobs), a volatile read only when an assign
     * gave back no continuation (a stray wake-up's race).
     *
     * `current` is the job running on this runner, or null: written by the runner (a release
     * store, a plain move on x86: nothing on the per-task path), read by a closing FiberIo that
     * cancels every running task (Scheduler.cancelRunning). The closer may miss a job that
     * started just as it looked; it looks again until every task has ended, so a missed job is
     * cancelled on the next look (and a job taken after the close began is cancelled before it
     * starts: `cancelOnStart`).
     *
     * A job whose run throws: a task's run never throws its body's exception (it becomes the
     * future's failure), so what escapes is an error the JVM threw, before the task started (the
     * thread's name for a named task) or while it completed. Seen with the heap full: an
     * OutOfMemoryError from the catch block that completes a failed task (a deoptimization that
     * needed memory), which left the task running for good and its awaiter (a call from main)
     * asleep. The runner settles such a job (settle: a task not started or running here fails with
     * what escaped, another RawTask is cancelled), then reports it, and goes on.
     *
     * Retirement, and the JIT: a runner runs at most JOBS_PER_RUNNER jobs, then ends (its worker's
     * loop starts a new runner for what comes next). Without an end, run()'s frame would outlive
     * the compiled code it runs in. When an uncommon trap elsewhere makes that code not entrant
     * (one runner meets a branch the others never took), every other runner keeps running the
     * old code, and HotSpot does not re-bind a not-entrant caller's call sites: calls to methods
     * compiled since go through the compiled-to-interpreted adapter, for good. Seen in
     * spawn_many_local: forks landed at 0.9, 1.7 or 3.0 ms/op, the slow ones with
     * Worker.nextForRunner interpreted under a compiled Runner.run in 65% of the samples; with
     * -XX:PerMethodTrapLimit=0 (no traps) every fork ran at 0.9 ms. A runner that ends after
     * 4,096 jobs leaves stale code behind within 4,096 jobs (about a hundred microseconds of
     * trivial ones), and a new runner starts in the current code; a start (a virtual thread, its
     * binding) costs about a microsecond and a kilobyte, a fraction of a nanosecond and about a
     * quarter of a byte per job (chainedSpawn: 80,111 -> 80,373 B/op for 1,000 spawns).
     * spawn_many_local, 8 forks on 2026-11-29 with the cores in their fast state throughout:
     * 275-302 us/op, no fork stuck in slow code.
     *
     * Why not an eternal loop that calls each batch of jobs through a MethodHandle the JIT cannot
     * fold (always dispatched to the current code), as runners did before: that call costs a
     * frame of its own (the method handle's form, 48 bytes and more) between run() and every
     * parked task, and it kept the batch's frame apart from run()'s. Every frame under a parked
     * task is copied at each park and resume and kept in its stack chunk: with the handle, the
     * chunk of a task parked in suspendRaw measured 400-736 bytes (median 544, 24 JVMs); with
     * the jobs run in run() itself, 384-624 (median 416, 24 JVMs). Measured by reading each
     * parked fiber's StackChunk (bottom - sp), 10,000 tasks, after 30 cycles; Memory.parked
     * went from 1,326 to 1,149 bytes per task (3 forks each).
     */

    private static final VarHandle CURRENT;
    private static final VarHandle ASSIGNED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CURRENT = lookup.findVarHandle(Runner.class, "current", RawTask.class);
            ASSIGNED = lookup.findVarHandle(Runner.class, "assigned", RawTask.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A runner runs at most this many jobs, then ends (see the notes). */
    static final int JOBS_PER_RUNNER = 4_096;

    /**
     * Tells a runner to end: assigned to an idle one at stop; returned by nextForRunner when the
     * runner retires, when its worker's pool is full, on a spare, or after stop.
     */
    static final RawTask STOP = new RawTask() {
        @Override
        public void run() {}

        @Override
        public boolean cancel() {
            return false;
        }

        @Override
        public boolean isDone() {
            return true;
        }

        @Override
        public String toString() {
            return "Runner.STOP";
        }
    };

    private final Scheduler scheduler;
    private volatile RawTask assigned;
    /** The job running now, or null; see the notes. */
    @SuppressWarnings("unused") // through CURRENT
    private RawTask current;
    /** Set once this runner's loop is over, before it takes back what was assigned; see the notes, "Ending". */
    private volatile boolean ended;
    /** Set before this idle runner is woken from a park on its carrier (wakeToLeave); see the notes. */
    private volatile boolean leave;
    /** The runner's thread, set once before it starts. */
    Thread thread;

    /** Set by run()'s first entry, on the runner's own thread, before it re-enters inside the binding. */
    private boolean slotBound;
    /** The context slot this runner bound for its life: its tasks run in it (Task.runIn). */
    private Context.Slot slot;

    private String name;
    private ClassLoader loader;
    private Thread.UncaughtExceptionHandler handler;

    Runner(Scheduler scheduler, RawTask first) {
        this.scheduler = scheduler;
        this.assigned = first;
    }

    /** Hands {@code job} to this idle runner and wakes it; called by the worker that took it from its pool. */
    void assign(RawTask job) {
        assigned = job;
        LockSupport.unpark(thread);
    }

    @Override
    public void run() {
        Thread self = Thread.currentThread();
        if (!slotBound) {
            // First entry: bind one context slot for every task this runner runs, and come back here
            // inside it (no lambda, no extra frame under every parked task's stack)
            slotBound = true;
            name = self.getName();
            loader = self.getContextClassLoader();
            handler = Carriers.ownHandler(self);
            Throwable failure = null;
            try {
                Runnable hook = scheduler.beforeRunnerEntry;
                if (hook != null) {
                    hook.run(); // tests: fail the first entry as a full heap would
                }
                slot = Context.newThreadSlot();
                Context.bind(slot).run(this);
            } catch (Throwable t) {
                failure = t;
            }
            // A job assigned and never taken is settled as a failed start's is (cancelled unless a
            // helper took it, and counted), not left unrun and uncounted: see the notes, "Ending"
            RawTask unrun = endAndTakeBack();
            try {
                if (unrun != null) {
                    scheduler.discard(unrun);
                }
                if (failure != null) {
                    Scheduler.reportUncaught(failure);
                }
            } finally {
                scheduler.runnerEnded(this);
            }
            return;
        }
        // The jobs run right here, not in a helper method: a parked task's stack chunk holds every
        // frame between run() and the park, and one more frame here cost ~1,000 B per task parked
        // while the code was still cold (FiberIoStressTest's 100k parked: 4,571 vs 3,326 B, 7 and 4 runs)
        RawTask job = takeAssigned();
        for (int left = JOBS_PER_RUNNER - 1; job != null; left--) {
            CURRENT.setRelease(this, job);
            try {
                if (scheduler.cancelOnStart) {
                    // The FiberIo is closing: a task that has not started never will (one an awaiter
                    // claimed since it was taken runs in place)
                    Scheduler.giveUp(job);
                }
                if (job instanceof Task<?> task) {
                    if (task.name() != null) {
                        self.setName(name + "/" + task.name()); // a named task: thread dumps show it (reset restores)
                    }
                    task.runIn(slot); // the runner's own slot, innermost here: no lookup
                } else {
                    job.run();
                }
            } catch (Throwable t) { // a RawTask does not throw; if one does, it must not end the runner silently
                settle(job, t);
                Scheduler.reportUncaught(t);
            }
            CURRENT.setRelease(this, (RawTask) null);
            reset(self);
            RawTask next = scheduler.nextForRunner(this, job, left == 0);
            job = next == null ? awaitAssignment() : next == STOP ? null : next;
        }
    }

    /**
     * Makes {@code job}, whose run threw {@code escaped} instead of returning, done if it can: a
     * task fails with it ({@link Task#tryFailAfterEscape}: unless a helper runs it), another RawTask
     * is cancelled. Left running, the job's awaiters would sleep for good. What escapes a task's run
     * is an error the JVM threw (an OutOfMemoryError when the heap is full: even a catch block may
     * need memory there), so a settle that meets another one tries again, a few times.
     */
    static void settle(RawTask job, Throwable escaped) {
        for (int attempt = 0; attempt < Task.ESCAPE_SETTLE_ATTEMPTS && !job.isDone(); attempt++) {
            try {
                if (job instanceof Task<?> task) {
                    task.tryFailAfterEscape(escaped);
                    return; // done, or not this runner's to end
                } else {
                    job.cancel();
                }
            } catch (OutOfMemoryError again) {
                // try again: the memory a deoptimized catch block needed may be there now
            } catch (Throwable broken) {
                return; // a RawTask whose cancel throws: nothing more to do (the caller reports the first)
            }
        }
    }

    /** Returns the job running on this runner now, or null. */
    RawTask current() {
        return (RawTask) CURRENT.getAcquire(this);
    }

    /**
     * Parks until a worker assigns a job; returns it, or null if told to stop, or if woken to
     * leave on the worker whose pool it is in (it left the pool: see the notes, "Parked on the
     * carrier").
     */
    RawTask awaitAssignment() {
        Runnable hook = scheduler.beforeRunnerIdles;
        if (hook != null) {
            hook.run(); // tests: fail the loop while this runner is in its worker's idle pool
        }
        RawTask job;
        while ((job = assigned) == null) {
            LockSupport.park(this);
            Thread.interrupted(); // an idle runner has no task to interrupt; do not spin on the flag
            if (leave && assigned == null) {
                leave = false;
                if (scheduler.leaveIdlePool(this)) {
                    return null; // it ends, and its worker's loop goes on
                }
            }
        }
        assigned = null;
        return job == STOP ? null : job;
    }

    /**
     * Marks this runner ended and takes back the job assigned to it, if any (null for none or
     * STOP); called once, by the runner as its loop is over. See the notes, "Ending".
     */
    RawTask endAndTakeBack() {
        ended = true;
        RawTask job = (RawTask) ASSIGNED.getAndSet(this, (RawTask) null);
        return job == STOP ? null : job;
    }

    /**
     * Takes back {@code job}, just assigned to this runner, if the runner has ended without taking
     * it: its thread is gone, so the assigning worker must run the job elsewhere. Returns false if
     * the runner is alive (it takes the job, where it runs now) or took the job as it ended (it
     * settles it). See the notes, "Ending".
     */
    boolean tryReclaimIfEnded(RawTask job) {
        return ended && ASSIGNED.compareAndSet(this, job, (RawTask) null);
    }

    /**
     * Wakes this idle runner, parked on its worker's carrier, to leave its pool and end; see the
     * notes, "Parked on the carrier". For the stall watch and stop(); allocates nothing while the
     * runner is still parked on its carrier (Carriers.parkedOnCarrier).
     */
    void wakeToLeave() {
        leave = true;
        LockSupport.unpark(thread);
    }

    private RawTask takeAssigned() {
        RawTask job = assigned;
        assigned = null;
        return job == STOP ? null : job;
    }

    /** Forgets what the last job left on this thread. */
    private void reset(Thread self) {
        if (self.isInterrupted()) { // a plain read; Thread.interrupted() is a call into VirtualThread each time
            Thread.interrupted();
        }
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
