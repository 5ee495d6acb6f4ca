package io.weft.fiber;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.TimerHandle;
import io.weft.fiber.sched.Carriers;
import io.weft.fiber.sched.Scheduler;
import io.weft.fiber.time.Clock;
import io.weft.internal.Context;
import io.weft.internal.HelpsAwaiters;
import io.weft.internal.RootTasks;
import io.weft.internal.Task;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * An {@link Io} whose tasks are fibers: JDK virtual threads scheduled by Weft's own
 * work-stealing scheduler. Thread-safe. Close it when done ({@link AutoCloseable}).
 *
 * <ul>
 *   <li>{@code Io.with(fiberIo).call(body)} from a thread that is not one of its tasks runs
 *       {@code body} as a root task and waits for it ({@link #call} does the same);
 *       {@link #spawn} hands a task over from outside without waiting.
 *   <li>{@code Io.async} queues the task and returns at once. From a fiber, the task goes to the
 *       current worker's LIFO slot if it is empty (it runs next, on a warm cache), else to the
 *       back of that worker's queue; from any other thread, to the shared injector queue. A task gets its fiber (a virtual thread of the scheduler) only when
 *       it runs, and keeps it until it ends; a fiber whose task ended runs the next queued task
 *       without unmounting. So {@code Thread.currentThread()} is stable for a task's whole life,
 *       and a later task may run on the same thread, as in any pool: it sees no
 *       {@code ThreadLocal} value, interrupt status, name or class loader left by an earlier one.
 *   <li>Awaiting a task of the same FiberIo that has not started runs it in place, on the
 *       awaiter's thread, with the awaiter's thread state set aside meanwhile (join helping).
 *       While it runs there it is part of the awaiter: cancelling the awaiter cancels it too.
 *   <li>{@link #suspendRaw} parks the current thread (a fiber unmounts and frees its carrier; a
 *       plain thread blocks) until the token is readied or the task is cancelled.
 *   <li>Everything Java offers a thread works in a fiber: {@code ThreadLocal}s, {@code ScopedValue}s,
 *       monitors, socket I/O (it unmounts the fiber), thread dumps and JFR. Blocking file I/O and
 *       a park pinned to its carrier (inside a class initializer or a native frame) block the
 *       worker instead: the JDK compensates for that only on its own default scheduler.
 *   <li>A virtual thread that a task starts itself ({@code Thread.ofVirtual()},
 *       {@code Executors.newVirtualThreadPerTaskExecutor()}, a {@code StructuredTaskScope} fork)
 *       is not a fiber: it runs on the JDK's default scheduler, as it would outside Weft, and
 *       closing the FiberIo neither waits for it nor affects it. (A virtual thread would
 *       otherwise inherit the scheduler of the virtual thread that builds it; FiberIo moves such
 *       threads to the default scheduler at their start.) The JDK's own socket-poller threads,
 *       when one of this FiberIo's fibers started them or they wake one of its fibers while no
 *       other FiberIo runs them, run on its workers while it is open and
 *       has a stall watch of at most 10 ms ({@link Builder#stallThreshold}; a wake-up from a
 *       socket is then a push to a worker's queue), on the
 *       default scheduler whenever the workers leave them queued for a stall threshold, and
 *       there once it closes (until another FiberIo's fiber is woken by them).
 *   <li>The clock is real by default. With {@link Builder#virtualClock()} it is virtual: time
 *       advances only when no fiber can run, jumping to the earliest timer. With one worker as
 *       well, a program's interleaving and output are the same on every run;
 *       {@link Builder#explore(long)} and {@link Simulation} explore other interleavings by seed.
 * </ul>
 *
 * <p>FiberIo needs the JVM flag {@code --add-opens java.base/java.lang=ALL-UNNAMED} (on the
 * module path, {@code java.base/java.lang=io.weft.fiber}); without it, building one fails with a
 * message naming the flag.
 *
 * {@snippet :
 * try (FiberIo io = FiberIo.create()) {
 *     long total = io.call(() -> {
 *         List<Future<Long>> parts = new ArrayList<>();
 *         for (int i = 0; i < 1_000; i++) {
 *             long n = i;
 *             parts.add(Io.async(() -> n * n));   // 1,000 tasks
 *         }
 *         long sum = 0;
 *         for (Future<Long> part : parts) sum += part.await();
 *         return sum;
 *     });
 * }
 * }
 */
public final class FiberIo implements Io, AutoCloseable {
    /*
     * Implementation notes.
     *
     * spawnRaw submits the task itself to the scheduler (no wrapper, no registry entry); it
     * gets a runner fiber (a virtual thread built with the scheduler as its Executor) when a
     * worker runs it (see sched.Worker, sched.Runner), or is cancelled if the workers stop
     * first. The scheduler counts live tasks per worker without locks or RMWs (see Scheduler).
     * suspendRaw/ready are LockSupport.park/unpark through the ParkToken protocol, which works
     * for fibers and plain threads alike.
     *
     * close(): (1) `closing` is set, so spawnRaw refuses new tasks; (2) every task is
     * cancelled: running and parked ones (parked ones wake at their suspend point and unwind,
     * running ones at their next one), and queued ones as a worker takes them (before they
     * start: their bodies never run); (3) the closing thread waits until no task is live or the
     * timeout passes, cancelling running tasks again on every look (a spawn that raced step 1
     * started after step 2 looked: it is found then; an ending task unparks the closer, a
     * wake-up that can be missed since neither side fences, so it also looks every 10 ms);
     * (4) the workers stop (jobs still queued are cancelled, also on a worker that stays stuck) and their threads are joined, within what is left of the same
     * timeout. Tasks still alive then are reported by close() in an IllegalStateException,
     * never dropped silently; they stay parked (a virtual thread cannot be killed), and one that
     * is readied later goes on on the JDK's default scheduler, where, cancelled, it unwinds
     * (sched.Carriers, "Fibers after stop": on a virtual clock, up to a wait on this FiberIo's
     * timers, which no longer fire). Worker
     * threads that did not end are reported too. Idempotent: a second close does nothing.
     */

    private static final AtomicInteger INSTANCES = new AtomicInteger();
    /** How often a closing FiberIo looks again for running tasks to cancel, at most. */
    private static final long LOOK_AGAIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    static {
        // Join helping (DESIGN §4): a task awaiting a task of a FiberIo that has not started runs
        // it in place. It starts without the awaiter's ThreadLocal values and interrupt status (it
        // does run with the awaiter's class loader and handler), and the awaiter gets all of its
        // own back after, whatever the helped task left (Carriers.runInPlace; the interrupt
        // status, Task.runHelped).
        // Io.with(fiberIo) from a thread that is not one of its tasks runs the body as a root task
        // (DESIGN §3.7): on a virtual clock time stands still while it runs, with one worker the
        // run is deterministic.
        RootTasks.register(FiberIo.class);
        HelpsAwaiters.register(FiberIo.class, (io, task, awaiter, slot) -> {
            try {
                // Its queued entry, if next on this worker, goes now: a stealer would otherwise take
                // it and look at the task only to find it claimed (in-order awaits of a burst of
                // spawns). Inside the try: whatever happens, the end is counted below
                ((FiberIo) io).scheduler.dropClaimedHead(task);
                Carriers.runInPlace(task, awaiter, slot);
            } finally {
                ((FiberIo) io).scheduler.countEndedInPlace();
            }
        });
    }

    private final Scheduler scheduler;
    private final boolean virtualClock;
    private final Duration closeTimeout;
    private final Thread.UncaughtExceptionHandler uncaughtExceptionHandler;
    private final String name;
    private volatile boolean closing;
    private volatile boolean closed;
    /** Set by shutdown if some worker thread did not end in time (a fiber blocking its carrier). */
    private volatile String stuckWorkers;
    /**
     * Held by a shutdown: a private lock, not this FiberIo's monitor, which user code may hold (a
     * task holding it would keep a close from starting, and so from cancelling it).
     */
    private final Object closeLock = new Object();
    /** What the closing shutdown returned; written before `closed`. */
    private List<RawTask> unfinishedAtClose = List.of();
    /** Runs Io.blocking bodies; made on first use (under blockingLock, which close takes too). */
    private volatile BlockingPool blockingPool;
    /** The context class loader of the thread that built this FiberIo: its blocking threads get it. */
    private final ClassLoader loader = Thread.currentThread().getContextClassLoader();

    private final Object blockingLock = new Object();
    private final int blockingThreads;
    /**
     * The executors handed out and not terminated: closing shuts them down. Weak: an executor
     * nobody holds is forgotten (its running submissions hold it, so it stays while they run).
     */
    private final Set<FiberExecutor> executors =
            Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private FiberIo(Builder builder) {
        Carriers.checkAvailable();
        this.virtualClock = builder.virtualClock;
        this.closeTimeout = builder.closeTimeout;
        this.uncaughtExceptionHandler = builder.uncaughtExceptionHandler;
        this.name = builder.name != null ? builder.name : "weft-" + INSTANCES.incrementAndGet();
        this.blockingThreads = builder.blockingThreads;
        Clock clock = virtualClock ? Clock.virtual() : Clock.real();
        this.scheduler = new Scheduler(
                builder.workers,
                builder.runQueueCapacity,
                clock,
                builder.seed,
                builder.spinBeforeParking,
                name,
                builder.explore);
        try {
            scheduler.watchForStalls(builder.stallThreshold);
        } catch (RuntimeException | Error e) { // its thread could not start: the workers must not be left parked
            scheduler.stopAfterFailedStart(e);
            throw e;
        }
    }

    /**
     * Creates a FiberIo with one worker per available processor (at most 64, the most a FiberIo
     * has) and the real clock.
     *
     * @return a running FiberIo
     * @throws IllegalStateException if the JVM lacks {@code --add-opens java.base/java.lang}
     */
    public static FiberIo create() {
        return builder().build();
    }

    /**
     * Returns a builder for a FiberIo with options.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** The default worker count for {@code processors} available processors: one each, at most 64. */
    static int defaultWorkers(int processors) {
        return Math.max(1, Math.min(processors, 64));
    }

    /** Builds a {@link FiberIo}. Not thread-safe; use one builder per thread. */
    public static final class Builder {
        private int workers = defaultWorkers(Runtime.getRuntime().availableProcessors());
        private boolean virtualClock;
        private long seed = 0x5EED_5EEDL;
        private boolean explore;
        /*
         * The most a worker's ring grows to (it starts at 256 slots and doubles when full): a burst
         * of local spawns beyond it spills into the shared Injector (a node, a lock and a second
         * hop per task). Fixed rings measured on spawn_many_local (10,000 spawns from one task, 2
         * workers, 3 forks): 793 +- 91 us/op at 256, 515 +- 56 at 4096; a ring that grows (see
         * RunQueue, "Growing") takes the whole burst. Cost: the slots a burst needed (256 KB per
         * worker at the most), kept for the worker's life; a resumed fiber queued behind a local
         * backlog waits for it, as it would in the Injector (idle workers steal half meanwhile).
         */
        private int runQueueCapacity = 1 << 16;
        private Duration closeTimeout = Duration.ofSeconds(5);
        private String name;
        private boolean spinBeforeParking = true;
        private Thread.UncaughtExceptionHandler uncaughtExceptionHandler;
        private int blockingThreads = 512;
        private Duration stallThreshold = Duration.ofMillis(2);

        private Builder() {}

        /**
         * Sets how long a worker's carrier may stay blocked inside one task, with work queued behind
         * it that nobody takes, before a spare worker is started to run that work (2 ms by default;
         * {@link Duration#ZERO} turns this off). A task that blocks its carrier in the kernel
         * (blocking file I/O, a wait pinned to the carrier) then delays other tasks by a few times
         * this, not until it returns. A task that computes gets no spare (it would oversubscribe
         * the cores); on Linux the kernel's thread state tells the two apart, elsewhere CPU time. Spares are extra carrier threads (at most 64 carriers in all) that retire after
         * 20 ms idle; {@link FiberIo#metrics()} counts them. A virtual clock never starts spares:
         * its runs must not depend on real time. {@link Io#blocking} avoids the stall altogether.
         *
         * <p>The same watch lets this FiberIo run the JDK's socket-poller threads that start from
         * or wake its fibers (see the class notes): with a threshold of zero or over 10 ms it
         * leaves them on the JDK's default scheduler, since a poller run left queued behind busy
         * workers is handed back only after a threshold, and every virtual thread's socket I/O in
         * the JVM waits for it meanwhile.
         *
         * @param threshold zero (off) or a positive duration of at most an hour
         * @return this builder
         * @throws IllegalArgumentException if {@code threshold} is negative or over an hour
         */
        public Builder stallThreshold(Duration threshold) {
            Objects.requireNonNull(threshold, "threshold");
            if (threshold.isNegative() || threshold.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("stall threshold must be 0 (off) to 1 hour, got " + threshold);
            }
            this.stallThreshold = threshold;
            return this;
        }

        /**
         * Sets how many threads {@link Io#blocking} bodies may occupy at once (512 by default);
         * further bodies wait in a queue for a thread. Threads are made on demand and end after
         * 30 s idle, except one, which stays until close.
         *
         * @param count at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code count} is less than 1
         */
        public Builder blockingThreads(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("blocking threads must be at least 1, got " + count);
            }
            this.blockingThreads = count;
            return this;
        }

        /**
         * Sets the number of workers (carrier threads).
         *
         * @param count 1 to 64
         * @return this builder
         * @throws IllegalArgumentException if {@code count} is out of range
         */
        public Builder workers(int count) {
            if (count < 1 || count > 64) {
                throw new IllegalArgumentException("workers must be 1..64, got " + count);
            }
            this.workers = count;
            return this;
        }

        /**
         * Makes the clock virtual: it starts at 0 and advances only when no fiber can run, jumping
         * to the earliest timer. With {@code workers(1)}, runs are reproducible.
         *
         * @return this builder
         */
        public Builder virtualClock() {
            this.virtualClock = true;
            return this;
        }

        /**
         * Sets the seed of the scheduler's random choices (which worker to steal from).
         *
         * @param seed any value
         * @return this builder
         */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Makes {@code seed} decide the scheduler's tie-breaks too, for simulation testing: timers
         * due at the same instant fire in a seeded order (not in arming order), and a worker that
         * has both a newly readied task and older queued ones runs either first by the seed. Every
         * such order is one a real run could take. With {@link #virtualClock()} and
         * {@code workers(1)}, a seed is a whole run: the same seed gives the same interleaving,
         * different seeds explore different ones ({@link Simulation} runs a body under many).
         * It sets the same seed as {@link #seed(long)} (a later {@code seed(x)} changes it) and
         * turns exploring on for this builder.
         *
         * @param seed the seed of every choice
         * @return this builder
         */
        public Builder explore(long seed) {
            this.seed = seed;
            this.explore = true;
            return this;
        }

        /**
         * Sets the most tasks each worker's local run queue holds (65,536 by default; the queue
         * starts with room for 256, or for {@code capacity} if that is smaller, and doubles when
         * full). Local spawns beyond it spill into the shared queue that remote submissions use; a
         * smaller queue bounds how many tasks a resumed fiber can find queued ahead of it on its
         * worker.
         *
         * @param capacity a power of two, at least 2
         * @return this builder
         * @throws IllegalArgumentException if {@code capacity} is not a power of two of at least 2
         */
        public Builder runQueueCapacity(int capacity) {
            if (capacity < 2 || Integer.bitCount(capacity) != 1) {
                throw new IllegalArgumentException("run-queue capacity must be a power of two >= 2, got " + capacity);
            }
            this.runQueueCapacity = capacity;
            return this;
        }

        /**
         * Sets how long {@link FiberIo#close()} waits for cancelled tasks to unwind (5 s by default).
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws IllegalArgumentException if {@code timeout} is not positive
         */
        public Builder closeTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("close timeout must be positive, got " + timeout);
            }
            this.closeTimeout = timeout;
            return this;
        }

        /**
         * Sets whether a worker that runs out of work spins before it parks; on by default. A
         * worker that has just run something stays awake for up to 50 microseconds (a few
         * spin-waits, then yields of its thread, which give the core to any other runnable
         * thread); one that woke and found nothing parks again after a few yields. Spinning saves
         * the park/unpark round trip when work arrives microseconds later (a caller that calls
         * into this FiberIo over and over), at the cost of up to 50 microseconds of a core after
         * each burst of work. A virtual clock never spins.
         *
         * @param spin whether to spin
         * @return this builder
         */
        public Builder spinBeforeParking(boolean spin) {
            this.spinBeforeParking = spin;
            return this;
        }

        /**
         * Sets the name used for the worker threads ({@code name-worker-i}).
         *
         * @param name a name
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * Sets where failures of detached tasks ({@link Io#launch}) go; by default the
         * uncaught-exception handler of the fiber that ran the task (the JVM's default handler).
         *
         * @param handler the handler
         * @return this builder
         */
        public Builder uncaughtExceptionHandler(Thread.UncaughtExceptionHandler handler) {
            this.uncaughtExceptionHandler = Objects.requireNonNull(handler, "handler");
            return this;
        }

        /**
         * Builds and starts the FiberIo.
         *
         * @return a running FiberIo
         * @throws IllegalStateException if the JVM lacks {@code --add-opens java.base/java.lang}
         */
        public FiberIo build() {
            return new FiberIo(this);
        }
    }

    // ---------------------------------------------------------------- running a root task

    /**
     * Runs {@code root} as a task on this FiberIo and blocks the calling thread until it
     * finishes; the way to enter Weft from {@code main}. From a thread that is not one of this
     * FiberIo's tasks it is {@code Io.with(this).call(root)} (a root task); from one of its
     * tasks, {@code root} runs as a child task of the caller. On a virtual clock, drive the whole
     * program from root tasks: a plain thread acting meanwhile races the clock.
     *
     * @param root the root task's body
     * @param <T> the value's type
     * @return what {@code root} returns
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of {@code root}
     * @throws io.weft.Cancelled if the root task was cancelled (for example, by {@link #close()})
     * @throws NullPointerException if {@code root} is null
     */
    public <T> T call(Callable<T> root) {
        Objects.requireNonNull(root, "root");
        Task<?> current = Context.currentTask();
        if (current != null && current.io() == this) {
            // a child of the calling task (run in place if nobody took it), spawned on this
            // FiberIo even where the task installed another Io (Io.with of an unregistered one)
            return Io.current() == this
                    ? Io.async(root).await()
                    : Context.with(this, () -> Io.async(root).await());
        }
        return Io.with(this).call(root); // a root task, the caller waiting for it (RootTasks)
    }

    /**
     * Runs {@code root} as a task on this FiberIo and blocks until it finishes; see {@link #call}.
     *
     * @param root the root task's body
     * @throws NullPointerException if {@code root} is null
     */
    public void run(Runnable root) {
        Objects.requireNonNull(root, "root");
        call(() -> {
            root.run();
            return null;
        });
    }

    /**
     * Starts {@code body} as a task of this FiberIo and returns its future at once, from any
     * thread: the way to hand work to a FiberIo from outside without waiting for it ({@code
     * Io.with(io).call} waits, since it runs its body as a root task). From a plain thread the task
     * goes to the shared injector queue; from one of this FiberIo's fibers it is {@code Io.async}
     * on this FiberIo.
     *
     * @param body the task's body
     * @param <T> the value's type
     * @return the task's future
     * @throws IllegalStateException if this FiberIo is closed
     * @throws NullPointerException if {@code body} is null
     */
    public <T> Future<T> spawn(Callable<T> body) {
        Objects.requireNonNull(body, "body");
        Task<T> task = Task.spawned(this, body);
        spawnRaw(task);
        return task;
    }

    /**
     * Returns a new {@link ScheduledExecutorService} whose submissions are tasks of this FiberIo,
     * for code written against {@code java.util.concurrent}: {@code
     * CompletableFuture.supplyAsync(supplier, io.executor())}, {@code
     * HttpClient.newBuilder().executor(io.executor())}, Reactor's {@code
     * Schedulers.fromExecutorService(io.executor())}.
     *
     * <ul>
     *   <li>Each submission is a Weft task: it runs on a fiber, {@code Io.current()} is this
     *       FiberIo inside it (so it may {@code Io.async}, await and sleep), and it is counted in
     *       {@link #liveTasks()}.
     *   <li>{@code Future.cancel} cancels the task the Weft way (the {@code mayInterruptIfRunning}
     *       flag is not needed): the future is cancelled at once, and the task unwinds at its next
     *       suspend point (or is interrupted in a blocking JDK call). A task cancelled before it
     *       starts never runs.
     *   <li>A failure of a task given to {@code execute} goes to this FiberIo's uncaught-exception
     *       handler (else the thread's), as for {@link Io#launch}; a submitted task's failure is in
     *       its future.
     *   <li>Delays and periods run on this FiberIo's clock (a virtual clock too), in whole
     *       milliseconds rounded up; a delayed run starts once the clock has passed its due time,
     *       as a timer fires, never before. A periodic task stops at its first failure, which its future
     *       reports.
     *   <li>{@code shutdown} refuses new submissions and cancels periodic tasks (a run in progress
     *       finishes first, uninterrupted, and is the last); the others run to
     *       their end (delayed ones at their time). {@code shutdownNow} also cancels every task and
     *       returns those that had not begun (a delayed task still waiting has not): for an
     *       {@code execute}, the {@code Runnable} given; for a submission, a {@code Runnable} that
     *       runs it and completes its future. {@code awaitTermination} waits until every task of
     *       this executor has ended. Shutting an executor down affects only the tasks submitted
     *       through it. Closing the FiberIo shuts every one of its executors down and, as it
     *       cancels every task, cancels theirs too: a command still queued then never runs, and
     *       nothing hands it back (a submission's future is cancelled). To let queued commands
     *       run, shut the executor down and await its termination before closing the FiberIo.
     * </ul>
     *
     * {@snippet :
     * try (FiberIo io = FiberIo.create()) {
     *     CompletableFuture<String> page = CompletableFuture.supplyAsync(() -> fetch(url), io.executor());
     *     HttpClient client = HttpClient.newBuilder().executor(io.executor()).build();
     * }
     * }
     *
     * @return a new executor over this FiberIo (shut down already if this FiberIo is closed)
     */
    public ScheduledExecutorService executor() {
        FiberExecutor executor = new FiberExecutor(this);
        executors.add(executor);
        if (closing) { // added, then looked: a close either sees the entry or is seen here
            executor.ioClosing();
        }
        return executor;
    }

    /**
     * Returns a snapshot of this FiberIo's started tasks: the task tree (spawner to children),
     * each task's state, what it waits for (a future, a channel, a semaphore, a timer) and since
     * when, the stacks of parked tasks, and await cycles or an all-parked state that look like a
     * deadlock. Print it ({@code toString()}) or read its records. Safe to call at any time, from
     * any thread, while the tasks run; it costs nothing until called.
     *
     * {@snippet :
     * System.err.println(io.dump());   // FiberIo shop at 1200 ms: 3 live task(s) ...
     * }
     *
     * @return the snapshot
     */
    public FiberDump dump() {
        return FiberDump.of(
                this,
                scheduler.threadContainer(),
                scheduler.liveTasks(),
                scheduler.unfinishedTasks(),
                scheduler.nextDeadline() != NO_DEADLINE);
    }

    /**
     * Returns a snapshot of this FiberIo's counters: per worker polls, LIFO hits, steals, shared-queue
     * batches, parks and busy time; tasks spawned, live, completed and cancelled; shared-queue
     * depth; timers armed. Always on, cheap to read (no lock but the timer heap's), safe from any
     * thread. Subtract two snapshots for rates.
     *
     * @return the snapshot
     */
    public FiberMetrics metrics() {
        return FiberMetrics.of(name, scheduler.workerCount(), scheduler.metrics());
    }

    /** Drops a terminated executor. */
    void forget(FiberExecutor executor) {
        executors.remove(executor);
    }

    /** How many of the JDK's socket sub-poller threads this FiberIo has run (tests; see ARCHITECTURE.md). */
    long hostedPollers() {
        return scheduler.hostedPollers();
    }

    /** The JDK's socket sub-poller threads this FiberIo runs now, none once closed (tests). */
    List<Thread> hostedPollerThreads() {
        return scheduler.hostedPollerThreads();
    }

    /** The scheduler (tests: whether a closed FiberIo's scheduler stays reachable). */
    Object schedulerForTests() {
        return scheduler;
    }

    /** How many queued runs of hosted sub-pollers the stall watch handed to the default scheduler (tests). */
    long pollerRescues() {
        return scheduler.pollerRescues();
    }

    /** Whether close() has begun: no new tasks are accepted. */
    boolean isClosing() {
        return closing;
    }

    /** This FiberIo's name (the builder's, else {@code weft-N}). */
    String name() {
        return name;
    }

    // ---------------------------------------------------------------- raw operations

    @Override
    public void spawnRaw(RawTask task) {
        Objects.requireNonNull(task, "task");
        if (closing) {
            throw new IllegalStateException(this + " is closed: it accepts no new tasks");
        }
        try {
            scheduler.submit(task); // racing close(): cancelled before it starts, or while it runs
        } catch (RejectedExecutionException e) { // the workers stopped
            task.cancel();
            throw new IllegalStateException(this + " is closed: it accepts no new tasks", e);
        }
    }

    @Override
    public void suspendRaw(ParkToken park) {
        Objects.requireNonNull(park, "park");
        park.suspend(); // LockSupport.park with the token's blocker: what a thread dump shows it waits for
    }

    @Override
    public void ready(ParkToken park) {
        Objects.requireNonNull(park, "park");
        park.tryReady();
    }

    @Override
    public long poll(long deadlineMs) {
        // The workers run fibers and fire timers by themselves; a caller can only wait for time
        // to pass, never past its deadline nor the next timer's. A virtual clock never waits.
        long now = nowMs();
        long until = Math.min(deadlineMs, scheduler.nextDeadline());
        if (!virtualClock && until != NO_DEADLINE && until > now) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(until - now));
        }
        return scheduler.nextDeadline();
    }

    @Override
    public Thread.UncaughtExceptionHandler uncaughtExceptionHandler() {
        return uncaughtExceptionHandler;
    }

    /**
     * Runs {@code body} on a thread of this FiberIo's blocking pool (platform threads named
     * {@code <name>-blocking-<n>}, made on demand up to {@link Builder#blockingThreads}) while the
     * calling task suspends; from a thread that is not one of this FiberIo's fibers, runs it right
     * there. See {@link Io#blocking}.
     *
     * @throws IllegalStateException if this FiberIo is closed
     */
    @Override
    public <T> T callBlocking(Callable<T> body) {
        Objects.requireNonNull(body, "body");
        if (!scheduler.isWorkerThread()) {
            return Io.super.callBlocking(body); // a plain thread: it may block itself
        }
        Io.checkpoint(); // a cancelled caller starts nothing
        BlockingPool pool = blockingPool;
        if (pool == null) {
            synchronized (blockingLock) {
                if (closing) {
                    throw new IllegalStateException(this + " is closed: it runs no more blocking calls");
                }
                if (blockingPool == null) {
                    blockingPool = new BlockingPool(name, blockingThreads, loader);
                }
                pool = blockingPool;
            }
        }
        return pool.call(
                body); // a closed pool's refusal comes out as IllegalStateException, the body's own exceptions as they
        // are
    }

    @Override
    public long nowMs() {
        return scheduler.nowMs();
    }

    @Override
    public TimerHandle armTimer(long deadlineMs, ParkToken park) {
        Objects.requireNonNull(park, "park");
        return scheduler.armTimer(deadlineMs, park);
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Returns the number of workers.
     *
     * @return the worker count
     */
    public int workers() {
        return scheduler.workerCount();
    }

    /**
     * Returns whether this FiberIo's clock is virtual.
     *
     * @return {@code true} for a virtual clock
     */
    public boolean hasVirtualClock() {
        return virtualClock;
    }

    /**
     * Returns how many tasks have been spawned and not finished.
     *
     * @return the number of live tasks
     */
    public int liveTasks() {
        return scheduler.liveTasks();
    }

    /**
     * Cancels every live task, waits up to {@code timeout} for them to unwind (their
     * {@code finally} blocks run), then stops the workers and joins their threads within what is
     * left of the timeout. Running and parked tasks are cancelled at once (and tasks they run in
     * place); queued ones when a worker takes them, before they start (their bodies never run);
     * those queued on a worker that a fiber keeps blocked are cancelled when the workers are
     * stopped. A spawn racing this call is either refused (IllegalStateException) or cancelled
     * with the rest. Idempotent: a later call, or one that waited for a concurrent one, waits no
     * more and returns the tasks of the first call's answer that have still not finished.
     *
     * @param timeout how long to wait for the tasks to unwind
     * @return the tasks that had started and not finished when the timeout passed (empty if all did)
     * @throws IllegalStateException if called from one of this FiberIo's own tasks
     * @throws NullPointerException if {@code timeout} is null
     */
    public List<RawTask> shutdown(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (closed) {
            return stillUnfinished();
        }
        if (scheduler.isWorkerThread()) {
            throw new IllegalStateException(
                    "a FiberIo cannot be closed from one of its own tasks: it would wait for itself");
        }
        synchronized (closeLock) {
            if (closed) {
                return stillUnfinished(); // a concurrent call closed it meanwhile: its answer, as it is now
            }
            closing = true;
            List<FiberExecutor> open;
            synchronized (executors) {
                open = List.copyOf(executors);
            }
            open.forEach(FiberExecutor::ioClosing); // they refuse submissions from now on
            scheduler.cancelAll();
            synchronized (blockingLock) {
                if (blockingPool != null) {
                    blockingPool.failQueued(); // never run: a shielded caller gets its answer now
                }
            }
            long deadline = System.nanoTime()
                    + TimeUnit.NANOSECONDS.convert(timeout); // saturates: "forever" is Long.MAX_VALUE ns
            boolean interrupted = false;
            while (scheduler.liveTasks() != 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                scheduler.awaitFewerTasks(
                        Math.min(left, LOOK_AGAIN_NANOS)); // an ending task usually unparks this thread
                interrupted |= Thread.interrupted();
                scheduler.cancelRunning(); // a task that started as the last look was made
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            List<RawTask> unfinished = scheduler.unfinishedTasks();
            synchronized (blockingLock) {
                if (blockingPool != null) {
                    blockingPool.shutdownNow(); // the cancelled callers stopped waiting: interrupt their bodies
                }
            }
            // The workers get what is left of the timeout, and at least a moment to see the stop.
            long left = Math.max(TimeUnit.MILLISECONDS.toNanos(100), deadline - System.nanoTime());
            stuckWorkers = scheduler.stop(Duration.ofNanos(left)) ? null : scheduler.describeLiveWorkers();
            unfinishedAtClose = unfinished;
            closed = true;
            return unfinished;
        }
    }

    /** The tasks the closing shutdown found unfinished that have still not finished. */
    private List<RawTask> stillUnfinished() {
        return unfinishedAtClose.stream().filter(task -> !task.isDone()).toList();
    }

    /**
     * Shuts down with the builder's close timeout (5 s by default); see {@link #shutdown}.
     *
     * @throws IllegalStateException if some tasks did not finish unwinding in time (they are
     *     listed), or if called from one of this FiberIo's own tasks
     */
    @Override
    public void close() {
        boolean first = !closed;
        List<RawTask> unfinished = shutdown(closeTimeout);
        if (!first) {
            return; // closed before this call: nothing to report again
        }
        if (!unfinished.isEmpty()) {
            throw new IllegalStateException(unfinished.size() + " task(s) of " + name + " did not finish within "
                    + closeTimeout + " of being cancelled (they stay parked, and go on on the JDK's default"
                    + " scheduler if readied later; a virtual thread cannot be killed): "
                    + unfinished);
        }
        String stuck = stuckWorkers;
        if (stuck != null) {
            throw new IllegalStateException("some worker threads of " + name + " did not stop within " + closeTimeout
                    + " (a fiber blocking its carrier: pinned, or in blocking file I/O):\n" + stuck);
        }
    }

    /**
     * Returns whether this FiberIo has been closed: its tasks were cancelled and its workers told
     * to stop. A worker a fiber keeps blocked may still be running; {@link #close()} says so.
     *
     * @return {@code true} once closed
     */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "FiberIo[" + name + ", " + scheduler.workerCount() + " workers, " + (virtualClock ? "virtual" : "real")
                + " clock at " + nowMs() + " ms, " + scheduler.liveTasks() + " live tasks" + (closing ? ", closed" : "")
                + "]";
    }
}
