package io.weft.fiber.sched;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.TimerHandle;
import io.weft.fiber.time.Clock;
import io.weft.fiber.time.TimerHeap;
import io.weft.fiber.time.VirtualClock;
import io.weft.internal.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * FiberIo's work-stealing scheduler: the {@link Executor} that the fibers' virtual threads are
 * built with, its {@link Worker}s and their carrier threads, the {@link Injector}, the
 * {@link IdleWorkers}, the clock and the timers. Thread-safe.
 */
public final class Scheduler implements Executor {
    /*
     * Implementation notes.
     *
     * Two kinds of work go through the queues: jobs (RawTasks: spawned tasks that have not
     * started, queued by submit; a job gets a runner fiber only when it runs: see Worker and
     * Runner) and fibers' continuations (queued by execute). submit routes a job like execute
     * below; from a fiber it touches its carrier's worker's owner-only state (the LIFO slot, the
     * queue's owner end, the submitted count).
     *
     * No pin on the owner's paths: a fiber that reads its carrier and then writes that worker's
     * owner-only state must not move to another carrier in between. A virtual thread leaves its
     * carrier only where it parks, yields or blocks (on a monitor or a java.util.concurrent lock:
     * JDK 24+ unmounts it there); in JDK 25 neither class initialization nor a debugger's suspend
     * moves a mounted one, and nothing preempts it. submit's path from the carrier lookup to the
     * end of the push (LIFO slot, RunQueue.push with its growth, its sweep of dead entries (a CAS,
     * the worker's own counters and taskEnded's unpark per cancelled job dropped) and its lock-free
     * overflow into the Injector), countEndedInPlace's one counter write and dropClaimedHead's popIfHead have
     * none of those, so they need no pin (Carriers.pin and unpin: a spawn took 12.3 ns with them,
     * 11.5 without, in a 1-worker probe). What follows the push (notifyParked, which may meet IdleWorkers' monitor) and the
     * count (taskEnded's unpark) touches no worker's state. nextForRunner stays pinned: it may
     * fire timers, take the Injector's lock or steal, all on the runner fiber. A change that adds
     * a lock, a park or a yield to those three paths must pin them again; so may a JDK that lets a
     * virtual thread leave its carrier in class initialization (under way after JDK 25).
     *
     * A push that fails: queueing allocates only when a RunQueue grows or overflows into the
     * Injector, or for the Injector's node, and each of those allocates before it changes any
     * state (RunQueue.tryPushOverflow requeues what it claimed if the Injector's nodes cannot be
     * made), so a push that throws (OutOfMemoryError) queued nothing. submit then takes back the
     * job's submitted count and rethrows: the spawner gets the error and no future, and close()
     * does not wait for a job that was never queued.
     *
     * Live jobs, without a registry: each worker counts the jobs submitted from its carrier and
     * the jobs that ended on it, in two plain fields written only by that carrier (release
     * stores, no RMW); submissions from other threads and jobs abandoned at stop go to two
     * AtomicLongs. liveTasks() reads every "ended" cell before every "submitted" cell: a job is
     * counted submitted before it is published, and its end is counted after it ended, so a
     * reader that sees an end (acquire) sees that job's submission too, and the difference never
     * undercounts what was live when the reads began. A job an awaiter ran in place is counted
     * ended by its helper (countEndedInPlace) and not again when its queued entry is taken (and
     * skipped), or dropped at once (dropClaimedHead).
     * (Before: a lock-striped intrusive list, one lock on spawn and one on end: ~25% of the
     * CPU samples of spawn_many_local.)
     *
     * What a closing FiberIo cancels: the jobs on runners (each runner publishes its current
     * job), repeated until the count is zero, and every job taken from a queue after
     * cancelAll(), which is cancelled before it starts (`cancelOnStart`). Runners are registered
     * in a concurrent set when they start and leave it when they end: rare events (at most one per
     * 4,096 jobs a runner runs in place), not per task.
     *
     * execute(task) is called by the JDK with a fiber's continuation, from three places, told
     * apart by the calling thread (plus one special case: a worker thread that is starting or
     * resuming a runner has `capturing` set, and the continuation is handed straight back to it
     * to run at once):
     *   - a fiber mounted on one of our workers (a spawn or a wake-up by a running fiber): the
     *     carrier is that worker, and the task goes to its LIFO slot (hot in cache, runs next);
     *   - one of our worker threads itself, with no fiber mounted: the JDK re-submitting a fiber
     *     that yielded (Thread.yield) or whose park raced an unpark, or a timer fired by the
     *     worker. DESIGN §5: "a yielding task goes to the back, not the slot": the local queue,
     *     and the worker's next pick looks at the Injector first (Worker, "Finding work", 0);
     *   - any other thread (main, a timer of another runtime, a plain thread readying a token):
     *     the Injector.
     * After a push, a parked worker is woken if nobody is searching (IdleWorkers).
     *
     * Timers live in one TimerHeap, fired by workers: in maintenance every Worker.BUDGET tasks,
     * after every park, and on a virtual clock by a worker that finds every worker parked and no
     * work anywhere, which first jumps the clock to the earliest deadline (one jump at a time,
     * under advanceLock, re-checking that nothing is runnable). Workers park no longer than the
     * next deadline. A timer armed from outside the workers that is the earliest once armed wakes
     * a parked worker if nobody is searching; a searching worker reads the new deadline before it
     * parks. "Once armed": the arm, then the read of the earliest, against a parking worker's
     * count as parked (an RMW), then its read of the earliest for its park timeout; with the fence
     * of IdleWorkers.workerToNotify, one of the two sees the other. A read before the arm could
     * see an earlier timer that a worker fires at that moment, that worker then parking past the
     * new one for the whole park timeout. A tie with a timer already armed wakes too: that one
     * may be firing at that moment (the arm then wrote nothing new; the argument rests on the
     * earlier write of the same deadline). Timers are fired only by workers: a worker blocked by
     * a pinned fiber fires none (with one worker, nothing fires until it is unblocked).
     *
     * Timers after stop: no worker is left to fire them, but a plain thread may still wait on one
     * (a timed await of a task that outlived the close: its clock is this FiberIo's). On a real
     * clock the JDK's delay scheduler (CompletableFuture.delayedExecutor: one shared daemon
     * thread, nothing per FiberIo; on that thread, not in the common pool, whose one thread on a
     * 2-core machine may be the very thread that waits) fires the next pending timer when it is
     * due (a few unparks) and looks again;
     * stop() schedules the first look for what is armed, an arm after stop for itself (the arm,
     * then the read of `stopped`; stop writes `stopped` before its own look: one sees the other).
     * fireAfterStopAt, the deadline a look is scheduled for, keeps the looks to one per deadline
     * (a duplicate finds nothing due and schedules nothing more). A virtual clock stops with the
     * workers: its timers never fire (ARCHITECTURE.md, "Known limits of the virtual clock").
     *
     * Virtual threads that are not fibers: a thread that user code (or the JDK, for its socket
     * pollers) builds inside a fiber inherits this Executor. Its first submission, at its start,
     * is recognised here and the thread is moved to the JDK's default scheduler for good (a
     * socket sub-poller may later be adopted, below), before it runs (Carriers, "Virtual
     * threads that are not fibers"); that check comes before the
     * `stopped` one, so a thread started after close is moved too, never dropped. Runner fibers
     * are started through startRunner, which marks them (Carriers.markStarting): that is how
     * they are told apart. The JDK's socket sub-pollers are the exception while the stall watch
     * runs: they stay, under a HostedPoller of their own, which places each of their runs
     * (here, or on the default scheduler; see HostedPoller); and one on the default scheduler
     * that readies a fiber here is adopted the same way (dispatch).
     *
     * Failures: an exception from firing timers or from maintenance (a readied thread whose own
     * scheduler throws) goes to the worker's uncaught-exception handler; it never ends a worker
     * (before: it did, silently, and a virtual clock then never advanced again).
     *
     * Stopping: `stopped` (volatile) is written once by stop(); workers read it every loop and
     * after every park; stop() unparks them all and joins their threads. Each worker on its way
     * out settles what is still queued with it: Jobs are abandoned (their tasks cancelled, never
     * run: nothing waits on them forever), fibers' continuations go on on the JDK's default
     * scheduler (afterStop; a cancelled task unwinds there), idle runners are ended. stop() then
     * settles what is left in the Injector. After stop, a fiber that is readied goes on on the
     * default scheduler too (Carriers, "Fibers after stop"): throwing at its readier would end
     * the JDK's monitor-unblocker thread, or fail a user's unlock(). Anything else submitted
     * after stop is rejected with RejectedExecutionException, as the JDK expects of a scheduler
     * that no longer runs anything: a virtual thread's start then fails cleanly.
     */

    /**
     * The configured workers (indices 0..configured-1), then the spares made so far for stalled
     * workers (StallWatch, activateSpare), up to 64 in all. Only indices below {@link #extent()}
     * are filled.
     */
    final Worker[] workers;
    /** How many workers were configured. */
    private final int configured;
    /** Filled slots of `workers`: grows (volatile write after the slot's) when a spare is first made. */
    private volatile int extent;

    private final String name;
    private final int spareQueueCapacity;
    private final long seed;
    /** Whether the stall watch was started. Guarded by this. */
    private boolean watching;
    /** The stall watch's thread, or null; stop() wakes and joins it. */
    private volatile Thread watch;
    /** Whether the JDK's socket sub-pollers may run here: the stall watch runs (HostedPoller). */
    private volatile boolean hostsPollers;
    /** Whether hosted sub-pollers run on the default scheduler for now (HostedPoller, lookAtPollers). */
    private volatile boolean pollersEvicted;
    /** The JDK's sub-poller threads started from this scheduler's fibers, or adopted (host). */
    private final List<HostedPoller> hostedPollers = new CopyOnWriteArrayList<>();
    /**
     * hostedPollers as an array, replaced on every change, for the stall watch's looks: iterating
     * the list allocates, and a watch that needs memory to look can do nothing when the heap is full.
     */
    private volatile HostedPoller[] pollersToWatch = NO_POLLERS;

    private static final HostedPoller[] NO_POLLERS = new HostedPoller[0];
    /** Sub-poller threads hosted since the scheduler was built (for tests). */
    private final AtomicLong pollersHosted = new AtomicLong();
    /** Runs of hosted sub-pollers the stall watch handed to the default scheduler. */
    private final AtomicLong pollerRescues = new AtomicLong();
    /** Spares started since the scheduler was built (for metrics). */
    private final AtomicLong sparesStarted = new AtomicLong();

    final Injector injector;
    final IdleWorkers idle;
    private final WorkerThread[] threads;
    private final Clock clock;
    private final TimerHeap timers = new TimerHeap();
    private final AtomicLong dropped = new AtomicLong();
    /** Fibers readied after stop (or queued at stop) that went on on the JDK's default scheduler. */
    private final AtomicLong handedOver = new AtomicLong();

    private final AtomicLong abandoned = new AtomicLong();
    /** Jobs submitted from threads that are not this scheduler's carriers (see liveTasks). */
    private final AtomicLong submittedElsewhere = new AtomicLong();
    /** Helped jobs whose helper ran off this scheduler's carriers (abandoned jobs are counted in `abandoned`). */
    private final AtomicLong endedElsewhere = new AtomicLong();
    /** Every runner fiber alive: what cancelRunning() visits. Changes only when a runner starts or ends. */
    private final Set<Runner> runners = ConcurrentHashMap.newKeySet();
    /** Set once a closing FiberIo cancels everything: a job taken after that is cancelled before it starts. */
    volatile boolean cancelOnStart;
    /** A thread waiting for the live-task count to drop (a closing FiberIo), or null: each ending job unparks it. */
    private volatile Thread endWaiter;
    /** Builds runner fibers: virtual threads whose scheduler is this. */
    private final Thread.Builder.OfVirtual fibers;
    /**
     * Starts the runner fibers (newRunnerThread builds them): a JDK thread-per-task executor is
     * the one public way to start threads in a thread container of their own, which groups them
     * in JSON thread dumps. Its name is the JDK's (class@hash): naming a container needs JDK
     * internals that FiberIo's one flag does not open. Package-private: tests read isShutdown.
     */
    final ExecutorService container;
    /** Runner fibers are named {@code <FiberIo name>-fiber-<n>}. */
    private final String fiberNamePrefix;

    private final AtomicLong fiberNumbers = new AtomicLong();
    /** Serializes virtual-clock jumps. */
    private final Object advanceLock = new Object();
    /** How long a virtual clock waits, in real time, before jumping past fibers blocked on monitors. */
    private static final long MONITOR_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /** How often stop() looks for idle runners parked on their carriers while it waits for the workers. */
    private static final long STOP_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** When the clock first found fibers blocked on monitors and held its jump, or 0. Guarded by advanceLock. */
    private long blockedSinceNanos;

    private volatile boolean stopped;
    /** After stop: the deadline a look of fireAfterStop is scheduled for, or NO_DEADLINE. */
    private final AtomicLong fireAfterStopAt = new AtomicLong(Io.NO_DEADLINE);
    /** The longest an idle worker parks before looking again (10 ms; the bound on a missed wake-up). */
    final long maxParkNanos;
    /** Tests only: run by a worker about to park, before it counts itself parked. */
    volatile Runnable beforePark;
    /**
     * Tests only: run before any scheduler starts one of its platform threads (a worker, a spare,
     * the stall watch); it may throw, as a start with no memory or no thread left does. Static:
     * a constructor starts its workers.
     */
    static volatile Consumer<Thread> beforeThreadStart;
    /** Tests only: run by armTimer before it puts the timer in the heap. */
    volatile Runnable beforeArm;
    /**
     * Tests only: run by a worker about to start a new runner fiber (the pool had none idle). It
     * runs while the worker captures continuations for the start: it must not ready a fiber.
     */
    volatile Runnable beforeRunnerStart;
    /** Tests only: run by a new runner fiber as it first enters, before it binds its context slot. */
    volatile Runnable beforeRunnerEntry;
    /** Tests only: run by a runner fiber about to wait in its worker's idle pool for its next job. */
    volatile Runnable beforeRunnerIdles;
    /** Whether the seed decides tie-breaks (FiberIo.Builder.explore); workers read it, never write. */
    final boolean explores;
    /** Orders timers due at the same instant when exploring (used under the TimerHeap's lock), else null. */
    private final SplittableRandom timerTies;
    /** Whether idle workers spin before parking; on a virtual clock they never do. */
    final boolean spinBeforeParking;

    /**
     * Creates and starts a scheduler.
     *
     * @param workerCount the number of workers (carrier threads), 1..64
     * @param queueCapacity the most tasks each worker's RunQueue holds (it grows to it), a power of two
     * @param clock the clock timers run on
     * @param seed the seed of the steal-victim choices
     * @param spinBeforeParking whether an idle worker spins briefly before it parks
     * @param name the prefix of the worker threads' names
     */
    public Scheduler(
            int workerCount, int queueCapacity, Clock clock, long seed, boolean spinBeforeParking, String name) {
        this(workerCount, queueCapacity, clock, seed, spinBeforeParking, name, false);
    }

    /**
     * As the other public constructor; with {@code explore}, the seed also decides tie-breaks: the
     * order of timers due at the same instant, and whether a worker runs its newest ready task
     * (LIFO slot) or its oldest (queue) when it has both (FiberIo.Builder.explore).
     *
     * @param workerCount the number of workers (carrier threads), 1..64
     * @param queueCapacity the most tasks each worker's RunQueue holds (it grows to it), a power of two
     * @param clock the clock timers run on
     * @param seed the seed of every random choice
     * @param spinBeforeParking whether an idle worker spins briefly before it parks
     * @param name the prefix of the worker threads' names
     * @param explore whether the seed decides tie-breaks too
     */
    public Scheduler(
            int workerCount,
            int queueCapacity,
            Clock clock,
            long seed,
            boolean spinBeforeParking,
            String name,
            boolean explore) {
        this(
                workerCount,
                queueCapacity,
                clock,
                seed,
                spinBeforeParking,
                name,
                Worker.PARK_TIMEOUT_NANOS,
                explore,
                new Injector());
    }

    /** As the public constructor, with the longest park of an idle worker (tests make it huge, so a lost wake-up hangs). */
    Scheduler(
            int workerCount,
            int queueCapacity,
            Clock clock,
            long seed,
            boolean spinBeforeParking,
            String name,
            long maxParkNanos) {
        this(workerCount, queueCapacity, clock, seed, spinBeforeParking, name, maxParkNanos, false, new Injector());
    }

    /** For tests: a real clock, no spinning, the default park timeout, and this Injector. */
    Scheduler(int workerCount, int queueCapacity, String name, Injector injector) {
        this(workerCount, queueCapacity, Clock.real(), 1, false, name, Worker.PARK_TIMEOUT_NANOS, false, injector);
    }

    private Scheduler(
            int workerCount,
            int queueCapacity,
            Clock clock,
            long seed,
            boolean spinBeforeParking,
            String name,
            long maxParkNanos,
            boolean explore,
            Injector injector) {
        this.injector = injector;
        this.maxParkNanos = maxParkNanos;
        this.explores = explore;
        this.timerTies = explore ? new SplittableRandom(seed ^ 0x7133_5EEDL) : null;
        this.idle = new IdleWorkers(workerCount);
        this.clock = clock;
        this.spinBeforeParking = spinBeforeParking;
        this.workers = new Worker[clock instanceof VirtualClock ? workerCount : 64];
        this.configured = workerCount;
        this.extent = workerCount;
        this.name = name;
        this.seed = seed;
        this.spareQueueCapacity = Math.min(queueCapacity, 256);
        this.threads = new WorkerThread[workerCount];
        this.fibers = Carriers.virtualThreadBuilder(this);
        this.fiberNamePrefix = name + "-fiber-";
        this.container = Executors.newThreadPerTaskExecutor(this::newRunnerThread);
        for (int i = 0; i < workerCount; i++) {
            workers[i] = new Worker(i, this, queueCapacity, seed);
            threads[i] = new WorkerThread(workers[i], name + "-worker-" + i);
            workers[i].carrier = threads[i];
        }
        try {
            for (WorkerThread thread : threads) {
                startThread(thread);
            }
        } catch (RuntimeException | Error e) { // no thread (out of memory, a ulimit): end those started
            stopAfterFailedStart(e);
            throw e;
        }
    }

    /**
     * Stops a scheduler whose start failed part way (a worker's or the stall watch's thread could
     * not start): the threads already started would otherwise park for good, unreachable and
     * never stopped. They hold no task yet, so they end at once; a failure to stop is added to
     * {@code cause}.
     */
    public void stopAfterFailedStart(Throwable cause) {
        try {
            if (!stop(Duration.ofSeconds(10))) {
                cause.addSuppressed(new IllegalStateException(name + ": a started worker did not end"));
            }
        } catch (RuntimeException | Error stopFailure) {
            cause.addSuppressed(stopFailure);
        }
    }

    /** Starts one of the scheduler's platform threads (a worker, a spare, the stall watch). */
    private void startThread(Thread thread) {
        Consumer<Thread> hook = beforeThreadStart;
        if (hook != null) {
            hook.accept(thread);
        }
        thread.start();
    }

    /** Returns the number of configured workers (spares started for stalled workers not included). */
    public int workerCount() {
        return configured;
    }

    /** The number of filled slots of {@code workers}: configured workers and spares made so far. */
    int extent() {
        return extent;
    }

    /**
     * Starts a spare worker, unless the scheduler stopped or 64 carriers are in use: a dormant
     * spare again, else a new one. It steals from worker {@code from} first (-1: anywhere).
     * Called by the stall watch only (one thread); returns whether a spare started.
     */
    synchronized boolean activateSpare(int from) {
        if (stopped) {
            return false;
        }
        int n = extent;
        Worker spare = null;
        for (int i = configured; i < n; i++) {
            if (!workers[i].active) {
                spare = workers[i];
                break;
            }
        }
        if (spare == null) {
            if (n == workers.length) {
                return false;
            }
            spare = new Worker(n, this, spareQueueCapacity, seed, true);
            workers[n] = spare;
            extent = n + 1; // publishes the slot
        }
        spare.handOffFrom = from;
        spare.active = true;
        idle.activate(spare.index);
        WorkerThread carrier = new WorkerThread(spare, name + "-spare-" + spare.index);
        spare.carrier = carrier;
        try {
            startThread(carrier);
        } catch (RuntimeException | Error e) { // no thread (out of memory, a ulimit): undo the counts
            idle.deactivate(spare.index);
            spare.carrier = null;
            spare.active = false;
            throw e;
        }
        sparesStarted.incrementAndGet();
        return true;
    }

    /** How many spares were started since the scheduler was built. */
    public long sparesStarted() {
        return sparesStarted.get();
    }

    /** Starts the stall watch (see StallWatch): real clocks only; a zero threshold starts nothing. */
    public synchronized void watchForStalls(Duration threshold) {
        if (threshold.isZero() || clockIsVirtual() || workers.length == configured || watching) {
            return;
        }
        Thread thread = new Thread(null, new StallWatch(this, threshold.toNanos()), name + "-stall-watch", 0, false);
        thread.setDaemon(true);
        watch = thread; // before it starts: a stop from now on unparks and joins it
        try {
            startThread(thread);
        } catch (RuntimeException | Error e) { // no watch: a later call may try again
            watch = null;
            throw e;
        }
        watching = true;
        // The watch rescues hosted sub-pollers' queued runs (HostedPoller): only when it looks often
        hostsPollers = threshold.toNanos() <= HostedPoller.MAX_THRESHOLD_NANOS;
    }

    @Override
    public void execute(Runnable task) {
        Thread foreign = Carriers.foreignStart(task);
        if (foreign != null) {
            HostedPoller poller = hostsPollers && HostedPoller.isJdkSubPoller(foreign) ? host(foreign, task) : null;
            if (poller != null) {
                poller.execute(task);
            } else {
                Carriers.moveToDefaultScheduler(foreign, task);
            }
            return;
        }
        dispatch(task);
    }

    /**
     * Makes {@code thread}, one of the JDK's sub-pollers, a thread of this scheduler (see
     * HostedPoller): before its first run, or (adopted) by the thread itself as it readies one
     * of this scheduler's fibers; its next submission reads the field. Returns null, and changes
     * nothing, once stop() has begun: under the monitor stop() takes to set `stopped`, so every
     * poller hosted here is in `hostedPollers` when stop() releases them.
     */
    private synchronized HostedPoller host(Thread thread, Runnable continuation) {
        if (stopped) {
            return null;
        }
        HostedPoller poller = new HostedPoller(this, thread, continuation);
        hostedPollers.add(poller);
        pollersToWatch = hostedPollers.toArray(NO_POLLERS);
        pollersHosted.incrementAndGet();
        Carriers.setScheduler(thread, poller);
        return poller;
    }

    /**
     * Queues {@code task}, a continuation that runs here (a fiber's, or a hosted sub-poller's
     * run), where the submitting thread says (see the notes); after stop, see afterStop.
     */
    void dispatch(Runnable task) {
        Thread current = Thread.currentThread();
        if (current instanceof WorkerThread thread && thread.worker.isOf(this)) {
            Worker worker = thread.worker;
            if (worker.capturing) {
                worker.captured = task; // a runner this worker is starting or resuming: it runs it next
                return;
            }
            if (stopped) {
                afterStop(task);
                return;
            }
            pushBackWakeUp(worker, task);
            worker.lookAtInjectorNext(); // a yield lets external submissions in too
        } else if (current.isVirtual()
                && Carriers.currentCarrier() instanceof WorkerThread carrier
                && carrier.worker.isOf(this)
                && !carrier.worker.transitioningToPark) {
            if (stopped) {
                afterStop(task);
                return;
            }
            if (carrier.worker.firingTimers) {
                pushBackWakeUp(carrier.worker, task);
            } else if (!carrier.worker.pushLifo(task)) {
                return; // a hand-off to the next fiber on this worker: nothing for others to steal
            }
        } else {
            if (stopped) {
                afterStop(task);
                return;
            }
            if (hostsPollers && current.isVirtual() && HostedPoller.isReleasedJdkSubPoller(current)) {
                host(current, Carriers.continuationOf(current)); // adopted: see HostedPoller
            }
            injector.pushWakeUp(task); // a rescue slot if the heap is full: see Injector, "Rescue slots"
            if (stopped) {
                settleLatePush(); // stop() may have drained the Injector before this push
                return;
            }
        }
        notifyParked();
    }

    /**
     * Queues the wake-up {@code task} at the back of {@code worker}'s queue; if that fails (a full
     * queue whose overflow finds no memory for the Injector's nodes), in one of the Injector's
     * rescue slots; if every slot is taken, the failure is thrown and the JDK retries the
     * submission (see Injector, "Rescue slots").
     */
    private void pushBackWakeUp(Worker worker, Runnable task) {
        try {
            worker.pushBack(task);
        } catch (RuntimeException | Error failure) {
            if (!injector.putRescued(task)) {
                throw failure;
            }
        }
    }

    /**
     * Queues {@code job}, a task that has not started; it gets a runner fiber when a worker runs
     * it, which calls its {@link RawTask#run()} once (or {@link RawTask#cancel()}s it, if the
     * scheduler stops first). From a fiber on one of this scheduler's workers it goes to that
     * worker's LIFO slot if the slot is empty (it runs next, on a warm cache), else to the back of
     * that worker's queue, so a fiber's spawns run in the order it made them (Worker, "Spawns and
     * the LIFO slot"); from a worker thread to the back of its queue; from anywhere else to the
     * Injector.
     *
     * @throws RejectedExecutionException if the scheduler has stopped
     */
    public void submit(RawTask job) {
        Thread current = Thread.currentThread();
        // Not pinned: the LIFO slot, the queue's owner end and the submitted count belong to the
        // carrier's worker, and nothing from the carrier lookup to the push can unmount this fiber
        // (see "No pin on the owner's paths" in the notes). notifyParked, after the push, may meet
        // IdleWorkers' monitor; a fiber that unmounts there touches no worker's state after it.
        if (current.isVirtual()
                && Carriers.currentCarrier() instanceof WorkerThread carrier
                && carrier.worker.isOf(this)
                && !carrier.worker.transitioningToPark) {
            rejectIfStopped(job);
            Worker worker = carrier.worker;
            worker.countSubmitted(); // before the job is visible: its end is never counted first
            boolean queued;
            try {
                queued = worker.pushJob(job);
            } catch (Throwable e) { // no memory to queue it (see "A push that fails"): never submitted
                worker.uncountSubmitted();
                throw e;
            }
            if (queued) {
                notifyParked();
            }
            return;
        }
        rejectIfStopped(job);
        if (current instanceof WorkerThread thread && thread.worker.isOf(this)) {
            thread.worker.countSubmitted();
            try {
                thread.worker.pushBack(job);
            } catch (Throwable e) {
                thread.worker.uncountSubmitted();
                throw e;
            }
        } else {
            submittedElsewhere.incrementAndGet();
            try {
                injector.push(job);
            } catch (Throwable e) {
                submittedElsewhere.decrementAndGet();
                throw e;
            }
            if (stopped) {
                // stop() may have drained the Injector between rejectIfStopped and the push: settle
                // it here (a push that read `stopped` as false comes before stop()'s own drain).
                drainInjector();
                return;
            }
        }
        notifyParked();
    }

    /**
     * A submission that arrived after stop: a fiber that already ran and is being readied (an
     * unpark, a monitor it waited for released, a timed park expiring) goes on on the JDK's
     * default scheduler, so it runs to its end instead of being stranded, and the readier (often
     * a JDK thread, such as the one that unblocks every virtual thread waiting for a monitor,
     * which an exception would end) is not thrown at. Anything else (a new fiber's start, a
     * plain Runnable) is rejected.
     */
    private void afterStop(Runnable task) {
        if (HostedPoller.isHostedOrReleased(task)) {
            // The JDK's poller: not a fiber, not counted. stop() has already released it; its
            // field is not written here, since another FiberIo may have adopted it since
            Carriers.runOnDefaultScheduler(task);
            return;
        }
        Thread resumed = Carriers.resumption(task);
        if (resumed != null) {
            handedOver.incrementAndGet();
            Carriers.moveToDefaultScheduler(resumed, task);
            return;
        }
        rejectIfStopped(task);
    }

    /**
     * Settles what a push that raced stop() left in the Injector, on a short-lived thread of its
     * own: the pusher may be a JDK thread (the monitor unblocker), and settling cancels queued
     * jobs, whose completion callbacks are user code that must not run (or block) there.
     */
    private void settleLatePush() {
        Thread.ofPlatform().daemon().name(name + "-late-drain").start(this::drainInjector);
    }

    private void rejectIfStopped(Runnable task) {
        if (stopped) {
            dropped.incrementAndGet();
            throw new RejectedExecutionException(this + " has stopped; it runs nothing more");
        }
    }

    /**
     * Hands {@code failure} to the current thread's uncaught-exception handler: what a worker does
     * with a failure that must not end it (a task's, a timer delivery's, an abandoned job's). Never
     * throws: a handler that throws is ignored, as the JVM ignores one of a dying thread.
     */
    static void reportUncaught(Throwable failure) {
        Thread current = Thread.currentThread();
        try {
            current.getUncaughtExceptionHandler().uncaughtException(current, failure);
        } catch (Throwable ignored) {
            // as the JVM does for a thread's handler; above all an OutOfMemoryError (a handler that
            // prints allocates): thrown from here it would end the worker, runner or watch that
            // caught the failure, and strand what that thread holds
        }
    }

    /**
     * Starts {@code runner}'s fiber in this scheduler's thread container, from {@code worker}'s
     * own thread: the container's factory ({@link #newRunnerThread}) builds and names the thread
     * and marks it as a fiber (Carriers.markStarting), and the container starts it at once.
     */
    void startRunner(Worker worker, Runner runner) {
        Runnable hook = beforeRunnerStart;
        if (hook != null) {
            hook.run(); // tests: act between the worker's last look at `stopped` and the start
        }
        worker.startingRunner = runner;
        try {
            container.execute(runner);
        } finally {
            worker.startingRunner = null;
            Carriers.clearStarting();
        }
    }

    /** The container's thread factory: a runner fiber, named, marked as a fiber being started. */
    private Thread newRunnerThread(Runnable body) {
        if (!(Thread.currentThread() instanceof WorkerThread starter) || starter.worker.startingRunner == null) {
            throw new IllegalStateException("runner fibers are started only by their scheduler's workers");
        }
        Thread fiber = fibers.unstarted(body); // body: the container's wrapper around the runner
        fiber.setName(fiberNamePrefix + fiberNumbers.incrementAndGet());
        starter.worker.startingRunner.thread = fiber;
        Carriers.markStarting(fiber);
        return fiber;
    }

    /**
     * The thread container of this scheduler's runner fibers: a JSON thread dump ({@code jcmd
     * <pid> Thread.dump_to_file -format=json}) lists them under it, not in the root container.
     */
    public String threadContainer() {
        return container.toString();
    }

    /**
     * Called by a runner fiber whose job {@code done} ended: counts that end, and returns the next
     * job for it to run in place, null once it is in its worker's idle pool, or
     * {@link Runner#STOP} (always when the runner {@code retires}: it ends). Runs pinned: it may
     * fire timers, take the Injector's lock or steal (see "No pin on the owner's paths" in the
     * notes).
     */
    RawTask nextForRunner(Runner runner, RawTask done, boolean retires) {
        Thread self = runner.thread;
        Carriers.pin(self);
        try {
            if (Carriers.currentCarrier() instanceof WorkerThread carrier && carrier.worker.isOf(this)) {
                return carrier.worker.nextForRunner(runner, done, retires);
            }
        } finally {
            Carriers.unpin(self);
        }
        // A runner that went on on the default scheduler after stop (afterStop): its job's end is
        // counted, and it ends.
        if (!(done instanceof Task<?> task && task.ranInPlace())) {
            endedElsewhere.incrementAndGet();
            taskEnded();
        }
        return Runner.STOP;
    }

    /**
     * Called by an idle runner woken with no job assigned: if it runs on the worker whose idle pool
     * it is in, takes it out of that pool and returns true (it ends); else returns false (it parks
     * again). Pinned meanwhile, as nextForRunner, since it touches the worker's owner-only state.
     */
    boolean leaveIdlePool(Runner runner) {
        Thread self = runner.thread;
        Carriers.pin(self);
        try {
            return Carriers.currentCarrier() instanceof WorkerThread carrier
                    && carrier.worker.isOf(this)
                    && carrier.worker.leaveIdlePool(runner);
        } finally {
            Carriers.unpin(self);
        }
    }

    /**
     * Counts the end of a task that an awaiter ran in place (join helping), on the calling
     * thread's carrier: the task's queued entry, run later, is not counted again.
     */
    public void countEndedInPlace() {
        Thread current = Thread.currentThread();
        // Not pinned: one owner-only counter write, nothing between it and the lookup that can
        // unmount this fiber (see "No pin on the owner's paths" in the notes)
        if (current.isVirtual()
                && Carriers.currentCarrier() instanceof WorkerThread carrier
                && carrier.worker.isOf(this)) {
            carrier.worker.countEnded();
            taskEnded();
            return;
        }
        endedElsewhere.incrementAndGet();
        taskEnded();
    }

    /**
     * Drops {@code job}'s queued entry if it is the oldest in the queue of the calling fiber's
     * worker: an awaiter on that worker claimed the job to run it in place (join helping), so the
     * entry has nothing left to do, and whoever took it would have to look at the job to find that
     * out (a stealer on another core: a miss in cache per entry). Not pinned: an owner-only pop, no
     * lock, park or yield (see "No pin on the owner's paths" in the notes).
     */
    public void dropClaimedHead(RawTask job) {
        if (Thread.currentThread().isVirtual()
                && Carriers.currentCarrier() instanceof WorkerThread carrier
                && carrier.worker.isOf(this)) {
            carrier.worker.dropHead(job);
        }
    }

    /** After a job's end was counted: wakes a thread waiting for the count to drop. */
    void taskEnded() {
        Thread waiting = endWaiter;
        if (waiting != null) {
            LockSupport.unpark(waiting);
        }
    }

    /**
     * A snapshot of the scheduler's counters for FiberIo.metrics: jobs submitted, jobs ended,
     * injector depth, timers armed, spares started, then each worker's counters (Worker.metrics,
     * 8 each; configured workers first, then the spares made so far).
     */
    public long[] metrics() {
        // Every end before any submission, as liveTasks reads them: a job submitted and ended
        // between the two reads then counts as submitted only, never as ended only (which made
        // completed exceed spawned, and the live count too low)
        long ended = endedElsewhere.get() + abandoned.get();
        int n = extent;
        for (int i = 0; i < n; i++) {
            ended += workers[i].endedCount();
        }
        long submitted = submittedElsewhere.get();
        for (int i = 0; i < n; i++) {
            submitted += workers[i].submittedCount();
        }
        long[] out = new long[5 + 8 * n];
        for (int i = 0; i < n; i++) {
            System.arraycopy(workers[i].metrics(), 0, out, 5 + 8 * i, 8);
        }
        out[0] = submitted;
        out[1] = ended;
        out[2] = injector.size();
        out[3] = timers.size();
        out[4] = sparesStarted.get();
        return out;
    }

    /**
     * Returns how many submitted jobs have not ended (not run yet, running, or parked). Exact when
     * nothing is being submitted or ending meanwhile; otherwise a value the count had between the
     * call and its return, or more (ends are read before submissions), never less than zero.
     */
    public int liveTasks() {
        long ended = endedElsewhere.get() + abandoned.get();
        for (int i = 0, n = extent; i < n; i++) {
            ended += workers[i].endedCount();
        }
        long submitted = submittedElsewhere.get();
        for (int i = 0, n = extent; i < n; i++) { // read again: a spare made meanwhile counts here too
            submitted += workers[i].submittedCount();
        }
        return (int) Math.max(0, submitted - ended);
    }

    /**
     * Waits until no job is live or {@code nanos} pass, whichever is first; returns early on any
     * job's end or a spurious wake-up (callers loop).
     */
    public void awaitFewerTasks(long nanos) {
        endWaiter = Thread.currentThread();
        try {
            if (liveTasks() != 0) {
                LockSupport.parkNanos(this, nanos);
            }
        } finally {
            endWaiter = null;
        }
    }

    /**
     * The first step of closing: every job taken from a queue from now on is cancelled before it
     * starts (its body never runs), and every job running now is cancelled. Callers repeat
     * {@link #cancelRunning()} until {@link #liveTasks()} is 0: a job that started just as this
     * looked is found on the next look.
     */
    public void cancelAll() {
        cancelOnStart = true;
        cancelRunning();
    }

    /**
     * Cancels the job running (or parked) on every runner fiber, and every task such a job runs in
     * place (join helping: a shielded helper's cancellation does not reach it); see
     * {@link #cancelAll()}.
     */
    public void cancelRunning() {
        for (Runner runner : runners) {
            for (RawTask job = runner.current(); job != null; job = helpedBy(job)) {
                job.cancel();
            }
        }
    }

    /** Returns the jobs that started and have not ended (running or parked; helped ones too), for reports. */
    public List<RawTask> unfinishedTasks() {
        List<RawTask> jobs = new ArrayList<>();
        for (Runner runner : runners) {
            for (RawTask job = runner.current(); job != null; job = helpedBy(job)) {
                if (!job.isDone()) {
                    jobs.add(job);
                }
            }
        }
        return jobs;
    }

    /** The task {@code job} runs in place now, or null. */
    private static RawTask helpedBy(RawTask job) {
        return job instanceof Task<?> task ? task.helping() : null;
    }

    void runnerStarted(Runner runner) {
        runners.add(runner);
    }

    void runnerEnded(Runner runner) {
        runners.remove(runner);
    }

    /**
     * Settles a queued item that will never run here (after stop, or when its runner could not
     * start): cancels a job (a task only if no awaiter claimed it to run in place); hands a fiber's
     * continuation to the JDK's default scheduler (see afterStop); counts anything else as dropped.
     */
    void discard(Runnable task) {
        if (task instanceof RawTask job) {
            try {
                giveUp(job);
            } catch (Throwable t) { // a waiter's failure is reported by the task: this one is the JVM's
                reportUncaught(t);
            } finally {
                // A task an awaiter claimed runs in place, and its helper counts its end; HELPED is
                // set only by a claim of a NEW task, so once giveUp returned the flag is settled
                if (!(job instanceof Task<?> queued && queued.ranInPlace())) {
                    abandoned.incrementAndGet(); // counted as ended, too
                    taskEnded();
                }
            }
        } else if (HostedPoller.isHostedOrReleased(task)) {
            Carriers.runOnDefaultScheduler(task); // the JDK's poller, released by stop() (as in afterStop)
        } else if (Carriers.resumption(task) instanceof Thread resumed) {
            handedOver.incrementAndGet(); // a fiber's continuation: it goes on, on the default scheduler
            Carriers.moveToDefaultScheduler(resumed, task);
        } else {
            dropped.incrementAndGet();
        }
    }

    /**
     * Cancels a queued job that will never run here: a task only if it has not started, in one
     * step ({@link Task#tryCancelUnstarted}), since an awaiter may claim it at any moment to run
     * it in place (a check, then cancel(), would cancel it as it runs).
     */
    static void giveUp(RawTask job) {
        if (job instanceof Task<?> task) {
            task.tryCancelUnstarted();
        } else {
            job.cancel();
        }
    }

    /** Returns whether the calling code runs on one of this scheduler's workers. */
    public boolean isWorkerThread() {
        Thread current = Thread.currentThread();
        Thread carrier = current.isVirtual() ? Carriers.currentCarrier() : current;
        return carrier instanceof WorkerThread thread && thread.worker.isOf(this);
    }

    /** Wakes a parked worker if work arrived and nobody is searching for it. */
    void notifyParked() {
        int worker = idle.workerToNotify();
        if (worker >= 0) {
            workers[worker].parker.unpark();
        }
    }

    /**
     * Returns whether the Injector or any worker's RunQueue holds work, LIFO slots not counted:
     * the idle spin's and a parking worker's re-check. A LIFO slot is its owner's next task (a
     * fiber handing off to the next, as in ping-pong); taking it from an idle worker would move
     * every hand-off across cores. A slot whose owner is stuck is found by the last searcher's
     * check below, or within a park timeout.
     */
    boolean isQueuedWorkPending() {
        if (!injector.isEmpty()) {
            return true;
        }
        Worker[] all = workers;
        for (int i = 0, n = extent; i < n; i++) {
            if (!all[i].queue.isEmpty()) {
                return true;
            }
        }
        return false;
    }

    /** Returns whether any queue or LIFO slot holds work (the last searcher's re-check before parking). */
    boolean isWorkPending() {
        if (!injector.isEmpty()) {
            return true;
        }
        Worker[] all = workers;
        for (int i = 0, n = extent; i < n; i++) {
            if (!all[i].queue.isEmpty() || all[i].hasLifo()) {
                return true;
            }
        }
        return false;
    }

    boolean isStopped() {
        return stopped;
    }

    /** Whether hosted sub-pollers run on the default scheduler for now (see HostedPoller). */
    boolean pollersEvicted() {
        return pollersEvicted;
    }

    /**
     * The stall watch's look at the hosted sub-pollers (HostedPoller, "Why not own them
     * them"): a run queued here, unmoved, for {@code thresholdNanos} is handed to the default
     * scheduler and the pollers are evicted; a look that finds a worker parked ({@code
     * anyParked}: the workers have time) lets them back.
     */
    void lookAtPollers(long now, long thresholdNanos, boolean anyParked) {
        if (anyParked) {
            pollersEvicted = false;
        }
        for (HostedPoller poller : pollersToWatch) {
            boolean queued = poller.onHost && Carriers.wayBack(poller.thread) == Carriers.ON_ITS_WAY_BACK;
            long sent = poller.sent();
            if (!queued) {
                poller.queuedSince = -1;
            } else if (poller.queuedSince < 0 || sent != poller.seenSent) {
                poller.queuedSince = now; // queued by a newer run: time it from here
                poller.seenSent = sent;
            } else if (now - poller.queuedSince >= thresholdNanos) {
                pollersEvicted = true;
                pollerRescues.incrementAndGet();
                poller.queuedSince = -1;
                // Not on the host any more: on a ForkJoinPool carrier its yields go back to the pool
                // without passing through the HostedPoller, and must not look queued here
                poller.onHost = false;
                Carriers.runOnDefaultScheduler(poller.continuation); // the queued copy will find it run
            }
        }
    }

    /** Returns how many of the JDK's socket sub-pollers this scheduler has hosted (see HostedPoller). */
    public long hostedPollers() {
        return pollersHosted.get();
    }

    /** Returns the JDK's sub-poller threads this scheduler hosts now (none once stopped; see HostedPoller). */
    public List<Thread> hostedPollerThreads() {
        return hostedPollers.stream().map(poller -> poller.thread).toList();
    }

    /** Returns how many queued runs of hosted sub-pollers the stall watch handed to the default scheduler. */
    public long pollerRescues() {
        return pollerRescues.get();
    }

    boolean clockIsVirtual() {
        return clock instanceof VirtualClock;
    }

    // ---------------------------------------------------------------- time

    /** Returns the scheduler's clock reading. */
    public long nowMs() {
        return clock.nowMs();
    }

    /** Arms a timer that readies {@code park} at {@code deadlineMs}. */
    public TimerHandle armTimer(long deadlineMs, ParkToken park) {
        Runnable hook = beforeArm;
        if (hook != null) {
            hook.run();
        }
        TimerHandle handle = timers.arm(deadlineMs, park);
        if (stopped) {
            fireAfterStop(); // no worker will: a plain thread's timed await of a closed FiberIo's future
        } else if (deadlineMs != Io.NO_DEADLINE && !isWorkerThread() && timers.nextDeadline() == deadlineMs) {
            wakeOneForTimers(); // the earliest once armed (a tie too: the tied timer may be firing); see the notes,
            // "Timers"
        }
        return handle;
    }

    /**
     * After stop, on a real clock: has the JDK's delay scheduler fire the next pending timer when
     * it is due, and look again then; see the notes, "Timers after stop". A virtual clock stops
     * with the workers: its timers never fire.
     */
    private void fireAfterStop() {
        if (clockIsVirtual()) {
            return;
        }
        while (true) {
            long next = timers.nextDeadline();
            long scheduled = fireAfterStopAt.get();
            if (next == Io.NO_DEADLINE || scheduled <= next) {
                return; // nothing to fire, or a look at or before it is on its way
            }
            if (fireAfterStopAt.compareAndSet(scheduled, next)) {
                long delay = clock.nanosUntilDue(next);
                // Run by the delay scheduler's own thread (Runnable::run): the default, the common
                // pool, can be busy for good (with 2 cores, one thread: a plain thread awaiting there)
                CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS, Runnable::run)
                        .execute(() -> {
                            fireAfterStopAt.compareAndSet(next, Io.NO_DEADLINE);
                            fireDueTimers();
                            fireAfterStop();
                        });
                return;
            }
        }
    }

    /** A searching or running worker re-reads the deadline before it parks; a parked one needs waking. */
    private void wakeOneForTimers() {
        notifyParked();
    }

    /** Fires the timers due now; returns how many fired. */
    int fireDueTimers() {
        long due = clock.dueMs(); // a real clock's reading must pass a deadline: Clock.dueMs
        if (timers.nextDeadline() > due) {
            return 0; // the heap's lock-free fast path: nothing due
        }
        return timers.fireDue(due, ParkToken::tryReady, timerTies);
    }

    /**
     * On a virtual clock, jumps to the earliest timer and fires what is due; returns whether
     * anything fired. Called by the last worker to go idle.
     */
    boolean advanceVirtualClock() {
        if (!(clock instanceof VirtualClock virtual)) {
            return false;
        }
        synchronized (advanceLock) {
            // Re-checked under the lock: two workers parking at once must not both jump (the
            // second would skip past the fibers the first one's timers just made runnable).
            if (idle.unparked() != 0 || isWorkPending() || mustWaitForFibersOnTheirWayBack()) {
                return false;
            }
            long next = timers.nextDeadline();
            if (next == Io.NO_DEADLINE) {
                return false;
            }
            virtual.advanceTo(next);
            return fireDueTimers() > 0;
        }
    }

    /**
     * Whether the clock must not jump yet because a runner fiber is runnable but not queued:
     * readied by a thread outside the workers (the JDK's unblocker after a contended monitor's
     * release, the I/O poller, a plain thread) and not yet through Scheduler.execute; its
     * submission wakes a worker, which looks again. A fiber blocked on a monitor with no sign of a
     * release on its way may still be one: the unblocker takes it off its waiting list a moment
     * before it grants the permit, and in between the JDK shows nothing. So while such fibers
     * exist the clock waits MONITOR_GRACE_NANOS of real time before it jumps past them (a monitor
     * held by a sleeping fiber costs a simulation that much per jump; measured: 1 run in ~800
     * missed the unblocker without it). O(runners), on clock jumps only; under advanceLock.
     */
    private boolean mustWaitForFibersOnTheirWayBack() {
        boolean blocked = false;
        for (Runner runner : runners) {
            Thread fiber = runner.thread;
            if (fiber != null) {
                int wayBack = Carriers.wayBack(fiber);
                if (wayBack == Carriers.ON_ITS_WAY_BACK) {
                    return true;
                }
                blocked |= wayBack == Carriers.BLOCKED_ON_MONITOR;
            }
        }
        if (!blocked) {
            blockedSinceNanos = 0;
            return false;
        }
        long now = System.nanoTime();
        if (blockedSinceNanos == 0) {
            blockedSinceNanos = now;
        }
        if (now - blockedSinceNanos < MONITOR_GRACE_NANOS) {
            return true;
        }
        blockedSinceNanos = 0;
        return false;
    }

    /** How long a worker may park: the given timeout, shortened to the next real deadline. */
    long parkTimeoutNanos(long maxNanos) {
        if (clock instanceof VirtualClock) {
            return maxNanos;
        }
        long next = timers.nextDeadline();
        if (next == Io.NO_DEADLINE) {
            return maxNanos;
        }
        return Math.max(1, Math.min(maxNanos, clock.nanosUntilDue(next))); // to the nanosecond: Clock.dueMs
    }

    /** Whether a timer is due now (the stall watch: nobody may be there to fire it). */
    boolean timerDue() {
        long next = timers.nextDeadline();
        return next != Io.NO_DEADLINE && next <= clock.dueMs();
    }

    /** Returns the earliest timer deadline, or {@link Io#NO_DEADLINE}. */
    public long nextDeadline() {
        return timers.nextDeadline();
    }

    /** Returns how many timers are pending; for diagnostics and tests. */
    public int pendingTimers() {
        return timers.size();
    }

    // ---------------------------------------------------------------- stopping

    /**
     * Stops the workers and waits for their threads to end; idempotent.
     *
     * @param timeout how long to wait for the threads
     * @return true if every worker thread ended
     */
    public boolean stop(Duration timeout) {
        synchronized (this) { // after this, activateSpare starts nothing
            stopped = true;
        }
        // The JDK's sub-pollers go back to the default scheduler now (until a FiberIo adopts them): their next runs go
        // there directly, and they no longer keep this scheduler reachable. A run of theirs still
        // queued here is settled by the drains below (HostedPoller.isHostedOrReleased).
        for (HostedPoller poller : hostedPollers) {
            Carriers.setScheduler(poller.thread, Carriers.defaultScheduler());
        }
        hostedPollers.clear();
        pollersToWatch = NO_POLLERS;
        container.shutdown(); // no new runner fibers; the container ends with the last one
        for (int i = 0, n = extent; i < n; i++) {
            workers[i].parker.unpark();
        }
        Thread watcher = watch;
        if (watcher != null) {
            LockSupport.unpark(watcher); // it sees `stopped` and ends; joined with the carriers below
        }
        long deadline =
                System.nanoTime() + TimeUnit.NANOSECONDS.convert(timeout); // saturates: "forever" is Long.MAX_VALUE ns
        boolean allEnded = true;
        // The caller's interrupt does not cut the wait short (every join would throw at once and a
        // worker a few microseconds from its end would be reported stuck); it is kept for after.
        boolean interrupted = Thread.interrupted();
        for (Thread thread : stoppingThreads()) {
            if (thread == Thread.currentThread()) {
                continue;
            }
            while (thread.isAlive()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                // The watch may have ended: an idle runner parked on its worker's carrier (out of
                // memory) is woken from here too, or that worker would never end
                try {
                    wakeRunnersParkedOnCarriers();
                } catch (Throwable t) { // an unpark that met a runner unmounted meanwhile: see Worker
                    reportUncaught(t);
                }
                try {
                    thread.join(Duration.ofNanos(Math.min(left, STOP_LOOK_NANOS)));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            allEnded &= !thread.isAlive();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        // Every worker that ended drained its own queue on its way out; what is left in the
        // Injector will never run either.
        drainInjector();
        // A worker that did not end (a fiber blocking its carrier) keeps its queue and LIFO slot:
        // take them as a thief would, so the jobs there are cancelled (their awaiters wake) and
        // the continuations counted, not left behind.
        for (int i = 0, n = extent; i < n; i++) {
            WorkerThread carrier = workers[i].carrier;
            if (carrier != null && carrier.isAlive()) {
                workers[i].drainFromOutside();
            }
        }
        fireAfterStop(); // timers still armed (a plain thread's timed await): no worker fires them now
        return allEnded;
    }

    /**
     * Unparks every idle runner parked on its worker's carrier (Runner's notes, "Parked on the
     * carrier"): for the stall watch, and for stop() (the watch ends with it; a scheduler on a
     * virtual clock, or with no stall threshold, has none).
     */
    void wakeRunnersParkedOnCarriers() {
        for (int i = 0, n = extent; i < n; i++) {
            workers[i].wakeRunnerParkedOnCarrier();
        }
    }

    /** The carrier threads: the configured workers', then the spares' (current or last). */
    private List<WorkerThread> carriers() {
        List<WorkerThread> all = new ArrayList<>(List.of(threads));
        return withSpares(all);
    }

    /** The threads stop() waits for: the carriers and the stall watch. */
    private List<Thread> stoppingThreads() {
        List<Thread> all = new ArrayList<>(carriers());
        Thread watcher = watch;
        if (watcher != null) {
            all.add(watcher);
        }
        return all;
    }

    private List<WorkerThread> withSpares(List<WorkerThread> all) {
        for (int i = configured, n = extent; i < n; i++) {
            WorkerThread carrier = workers[i].carrier;
            if (carrier != null) {
                all.add(carrier);
            }
        }
        return all;
    }

    private void drainInjector() {
        do { // a pop may miss a rescued task a concurrent take moved behind its scan: see Injector, "Rescue slots"
            for (Runnable task; (task = injector.pop()) != null; ) {
                discard(task);
            }
        } while (!injector.isEmpty());
    }

    /** Describes the worker threads still alive, with where they are; for error messages. */
    public String describeLiveWorkers() {
        StringBuilder sb = new StringBuilder();
        for (WorkerThread thread : carriers()) {
            if (thread.isAlive()) {
                sb.append(thread.getName()).append(' ').append(thread.getState());
                StackTraceElement[] stack = thread.getStackTrace();
                for (int i = 0; i < Math.min(8, stack.length); i++) {
                    sb.append("\n    at ").append(stack[i]);
                }
                sb.append('\n');
            }
        }
        return sb.toString();
    }

    /** Returns whether every worker thread has ended. */
    public boolean isTerminated() {
        for (WorkerThread thread : carriers()) {
            if (thread.isAlive()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Returns how many submissions were dropped because the scheduler stopped: rejected after
     * stop (a new fiber's start, a plain Runnable), or plain Runnables still queued at stop.
     */
    public long droppedAfterStop() {
        return dropped.get();
    }

    /**
     * Returns how many fibers went on on the JDK's default scheduler because they were readied
     * after stop, or were queued, ready, when it stopped.
     */
    public long handedOverAfterStop() {
        return handedOver.get();
    }

    /** Returns how many queued jobs were abandoned (cancelled without running) because the scheduler stopped. */
    public long abandonedAtStop() {
        return abandoned.get();
    }

    @Override
    public String toString() {
        return "Scheduler[" + configured + " workers, " + idle + ", injector=" + injector.size() + ", timers="
                + timers.size() + (stopped ? ", stopped" : "") + "]";
    }
}
