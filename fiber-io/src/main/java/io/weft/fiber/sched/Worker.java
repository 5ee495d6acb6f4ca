package io.weft.fiber.sched;

import io.weft.Future;
import io.weft.RawTask;
import io.weft.internal.Task;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * One carrier thread's share of the scheduler: a LIFO slot, a {@link RunQueue}, a {@link Parker},
 * and the loop that finds work, runs it and parks. Only its own thread runs the loop and touches
 * the LIFO slot; other workers only steal from its queue and unpark it.
 */
final class Worker implements Runnable, RunQueue.Sweeper {
    /*
     * Implementation notes.
     *
     * What a task is: either a job (a RawTask: a spawned task that has not started; DESIGN §4
     * "tasks before threads") or a fiber's continuation (the Runnable the JDK hands to
     * Scheduler.execute on unpark and after a yield). Running a continuation mounts the fiber on
     * this thread until it parks, yields or ends. A job needs a fiber: startJob takes an idle
     * Runner from this worker's pool (or builds one) and runs its continuation here at once
     * (Scheduler.execute captures it while `capturing` is set). A runner whose job ended asks
     * nextForRunner for more: a job runs in place on the runner, without unmounting; anything
     * else is left in `handOff` for this loop, and the runner parks in the pool
     * (MAX_IDLE_RUNNERS; beyond that it ends). nextForRunner runs on the runner fiber, pinned to
     * this carrier, so it has this worker's owner-only state to itself exactly as the loop does
     * (the loop is inside runTask meanwhile).
     *
     * Per-operation budget (the spawn path and the run of a task that never suspends):
     *   submit from a fiber  no pin (Scheduler, "No pin on the owner's paths"), 1 release
     *                        store (submitted count), 1 release store
     *                        into an empty LIFO slot (only the owner fills it), else a RunQueue
     *                        push (1 release store; a CAS-free owner push), 1 full fence and
     *                        1 volatile read (IdleWorkers fast path: the fence orders the push
     *                        before the read, see its "Lost wake-up"); no lock, no allocation
     *                        (the task itself is queued)
     *   run in place         LIFO getAndSet or a RunQueue pop (1 CAS on the packed head), 2
     *                        release stores (the runner's current job), the task's own run, the
     *                        isolation reset (3 field reads, rarely writes), 1 release store
     *                        (ended count), 1 volatile read (a closer to wake); no park, no
     *                        unmount, no lock, no allocation in the scheduler
     *   first run of a job   idle-pool pop + LockSupport.unpark of the runner (2 CASes in the JDK)
     *                        + one mount; a new runner (pool empty) adds a virtual thread (~ 200 B
     *                        + its stack chunk), its registration in the JDK's thread container
     *                        and in the scheduler's runner set
     *   a queued entry with  1 volatile read of the task's state (Task.nothingToRun), for every
     *   nothing to run       job taken; an entry an awaiter ran in place is dropped, one of a task
     *                        cancelled before it started has its end counted right here (2
     *                        release stores): neither gets a runner (before, a cancelled one was
     *                        handed to a runner, mounting an idle one when the loop took it).
     *                        A push that finds the local queue full first drops the dead
     *                        entries at its head (RunQueue, "Sweeping a full ring"): the same
     *                        read per entry, one CAS per sweep
     *
     * Finding work, in order (DESIGN §5):
     *   0. every `injectorInterval` tasks, and at the pick after the JDK re-submitted a fiber
     *      from this worker's own thread (a yield; also a park that raced its unpark, or a timer
     *      this loop fired), a
     *      fair-share batch from the Injector first (fairness for external submissions, however
     *      busy the local queues are: one task per interval starved them behind yield-looping
     *      fibers, measured in SpawnManyRemoteBusy). A yield is a fiber stepping aside for the
     *      others; external submissions are others too, so it lets them in as it lets the local
     *      queue run. Without that look, a worker whose fibers all yield in a loop took one batch
     *      per interval (see "Why 200 us" below): SpawnManyRemoteBusy 12.1 -> 3.3 ms/op (JMH, 3
     *      forks, two rounds; docs/ARCHITECTURE.md, "A yield looks at the Injector"). Its cost on
     *      a yield is a plain store, and at the next pick two acquire loads and a volatile read
     *      when the Injector is empty;
     *   1. the LIFO slot, at most MAX_LIFO_POLLS in a row (a fiber waking a fiber waking ... must
     *      not starve the queue): "per tick" in DESIGN §5 means consecutive polls here;
     *   2. the local RunQueue;
     *   3. the LIFO slot again (the cap only defers it behind the queue);
     *   4. a fair-share batch from the Injector: one to run, the rest into the local queue;
     *   5. as a searcher (at most half the workers search), steal half of a random victim's queue,
     *      or, if that queue is empty, the task in the victim's LIFO slot;
     *   6. the Injector once more, then park.
     * The seed design keeps the Injector batch in a private buffer checked first; we push it into
     * the local queue instead, where other workers can steal it if this worker's current fiber
     * runs long (see docs/ARCHITECTURE.md).
     *
     * LIFO slot: filled only by this thread (spawns and wake-ups made by a fiber running here
     * arrive in Scheduler.execute on this thread, the fiber being mounted on it), emptied by this
     * thread or by a stealer, both with getAndSet, so a task leaves the slot exactly once. Stealing
     * the slot matters: a fiber that spawns a child and then computes (or blocks its carrier: a
     * pinned park in a class initializer) would otherwise keep the child from every idle worker.
     * Filling the slot notifies a parked worker only when it evicted a task into the queue
     * (Tokio's rule: a hand-off between two fibers must not cost an unpark each time); a parked
     * worker still finds a stranded slot within its 10 ms park timeout.
     * `transitioningToPark` is the guard DESIGN §5 asks for: while set, execute() sends work to
     * the Injector instead of the slot. Since only this thread fills the slot and it is not
     * running a fiber while it parks, the guard is belt and braces: it keeps the invariant local.
     *
     * Spawns and the LIFO slot: a spawned job takes the slot only when it is empty; otherwise it
     * goes to the back of the local queue and the slot keeps what it holds (a wake-up always
     * takes the slot, evicting a job: pushLifo). So the jobs a fiber spawns in a row run in the
     * order they were spawned, the first one from the slot. DESIGN §5 puts the newest spawn in
     * the slot, as Tokio does; measured here, that costs the common "spawn a, spawn b, then race
     * or await" shape: the second spawn ran first. In Futures.race (winner spawned first, a
     * sleeping loser second) the loser started, armed a timer and parked before the winner ran,
     * then had to be woken to unwind; with spawns in order the winner completes first and the
     * loser is cancelled before it starts: 214 +- 94 -> 121 +- 19 us/op, 175,469 -> 71,690 B/op
     * (3 forks). spawn_many_local, chained_spawn, await chain, fan-out and ping_pong measured the
     * same within noise. It also saves the getAndSet and the eviction push of every spawn after
     * the first.
     *
     * Budget and maintenance: every BUDGET tasks, maintenance fires due timers and re-computes
     * the Injector check interval from the EWMA of the time per task over the batch (target 200 us
     * between Injector checks, clamped to 8..255 tasks). Timing a batch, not each task, keeps
     * System.nanoTime off the per-task path.
     * Why 200 us and not DESIGN §5's 1 ms: while every worker is busy with tasks that do not
     * yield, the Injector drains at one fair-share batch (at most 64) per worker per interval, so
     * the target caps how fast external submissions run at all: 64 per ms per worker with 1 ms
     * (busy tasks that yield let a batch in at each yield: step 0). SpawnManyRemoteBusy (10,000 spawns
     * from a plain thread, both workers running 5 us slices that yield) took 80.9 ms/op at 1 ms,
     * twice FJP's 38.9 (BENCHMARKS.md quick run, 2026-11-27), and 16.4 ms/op +- 1% at 200 us (3
     * forks, two runs). The target matters only for tasks longer than target / 255 (0.8 us now):
     * shorter ones hit the 255 clamp either way, and a look at an empty Injector is two acquire
     * loads and a volatile read, no lock.
     *
     * The loop calls turn() through a MethodHandle the JIT cannot inline: an eternal loop must
     * not keep running compiled code that was made not entrant (Runner's notes, "Retirement,
     * and the JIT"; a runner ends after a bounded number of jobs instead). A turn runs up to
     * TASKS_PER_TURN tasks and returns when it found nothing (after spinning or parking, which is
     * also where a spare retires) or when the scheduler stops: the indirect call is paid once
     * per batch, and a turn's frame ends after at most 64 tasks that return (a runner's
     * continuation that runs jobs in place keeps it meanwhile).
     *
     * Parking: see IdleWorkers for the protocol. The park timeout is the Parker's 10 ms, shortened
     * to the next timer's deadline on the real clock. On a virtual clock a worker that finds every
     * worker parked and nothing runnable advances the clock to the next timer instead of parking
     * (time passes only when nothing can run; Scheduler.advanceVirtualClock makes it one jump at a
     * time); with one worker, and the Injector interval fixed instead of timed, runs are
     * reproducible.
     *
     * Spinning: before parking, a worker that found nothing retries with Thread.onSpinWait (SPINS
     * times) and then Thread.yield, which hands the core to any other runnable thread. A worker that
     * ran something since its previous look came up empty keeps yielding up to IDLE_SPIN_NANOS
     * (50 us); otherwise (a park timeout, a notifier whose work another worker took) it stops after
     * YIELDS tries (seed 003: < 4 spins, then yields to 15), so an idle FiberIo costs a few
     * microseconds of a core per park timeout. Why 50 us: waking a worker asleep in the kernel is
     * dear on a virtual machine (the waker spends about 10 us in the unpark, and the woken worker
     * starts 15-25 us later on the 2-core test VM), and a program that calls into FiberIo over and
     * over (a request loop, a benchmark) comes back 10-20 us after the last task of a call ended,
     * the time its own thread takes to wake. With YIELDS tries alone (about 10 us) the workers were
     * asleep again by then. SplitProbe chainedSpawn (2 workers, six JVMs each): the caller's spawn
     * until the first link ran took a median of 19.4 us before, 6.2 us with 50 us of yielding; JMH
     * chained_spawn (fiber, 3-5 forks, alternating): 63.2 us/op before (mean of six runs), 50.3
     * with 50 us (mean of four); spawn_many_local, race, fan-out, await chain, ping_pong,
     * spawn_many_remote_idle and yield_many level within errors of 4-113% (BENCHMARKS.md,
     * "2026-11-27, fourth session").
     *
     * Where a spinning worker looks: the Injector on every try, other workers' queues at most
     * every LOOK_AROUND_NANOS (10 us) and once more before it gives up, unless that try has just
     * looked (park() then re-checks the Injector and every queue, so nothing waits for a park
     * timeout). A look at another worker's queue reads the cache line its owner writes on every
     * push and pop (head and tail), so each look costs the owner a miss on its next one, and a
     * look that finds work steals what the owner would have run itself a few microseconds later:
     * the loser of a race (started, then cancelled, woken and unwound instead of cancelled before
     * it starts), the links of an await chain (each claimed across cores). Looking on every try (one to two per microsecond) cost, JMH
     * fiber, one fork at a time, jars alternating, fast-state means: race 91.8 -> 70.1 us/op
     * (B/op 43-53 K -> 31-34 K: fewer losers started), awaitChain 15.4 -> 13.4, chainedSpawn
     * 42.1 -> 39.4, pingPong 446 -> 420, spawnManyRemoteIdle 369 -> 343; spawnManyLocal and
     * yieldMany level; fanOutFanIn 4-7% slower (two runs), the price: a thief joins a short burst
     * of local spawns up to 10 us later. Remote submissions go to the Injector, looked at on every
     * try, so their latency is unchanged. Shorter and longer intervals moved time between the rows
     * without moving a target across its line (4 us: race 70 -> 74, spawnManyLocal 290 -> 277;
     * 25 us: race 71 -> 67, awaitChain 13.4 -> 12.2, fanOutFanIn 44 -> 47), and so did a flag that
     * calls the spinner at once to a long burst (BENCHMARKS.md, "2026-11-28, eleventh session").
     *
     * Failures: nothing ends the loop but a stop or a spare's retirement. A task's failure is its
     * future's; a failure the worker meets itself (a timer delivery, a runner it cannot start, a
     * RawTask that throws) goes to the uncaught-exception handler, and Scheduler.reportUncaught
     * ignores a handler that throws; whatever still escapes a turn is reported the same way and
     * the loop goes on. A dead worker strands its queue, its LIFO slot and the fibers it alone
     * would resume, and nothing tells anyone. What escaped before (a FiberIo filling a 64 MB heap
     * with reachable objects, in a probe): the report of an OutOfMemoryError, itself an
     * OutOfMemoryError (a handler that prints allocates), which ended both workers, and the
     * handle's call of turn(), whose first customization after 127 calls needs memory. After a
     * failed turn the loop pauses FAILED_TURN_PAUSE_NANOS (1 ms: the next turn would most likely
     * fail at once, and for want of memory every failed allocation forces a collection) and calls
     * its next DIRECT_TURNS_AFTER_FAILURE (1,024) turns directly, not through the handle: the
     * handle's customization, once failed, is tried again at its every call, so with one direct
     * turn (the first version) a heap that stayed full made every other turn fail and pause (seen
     * in OutOfMemoryProbe: a run of 40 not ended after 30 s, both workers in
     * MethodHandle.customize). Direct turns run the loop's compiled code, which the handle is
     * there to avoid; 1,024 turns end, at the latest, after 65,536 tasks. A turn that failed
     * between two steps of the park protocol (IdleWorkers) may leave its counts off by one (a reviewer's reading: the
     * next park counts the worker parked a second time; not looked into further): accepted against
     * a dead worker. The constructor runs pushLifo's and putBackEvicted's call sites once (linkPushLifo): a
     * VarHandle call site's first run in interpreted code allocates, and a program whose awaits
     * are all helped in place may wake its first fiber from a worker only once its heap is full
     * (seen in a scratch build of OutOfMemoryProbe: the JDK's retry of a wake-up failing for 12 s
     * and more, every time after the carrier check and before pushLifo returned; the same class of
     * failure as WaiterStack's, "Linked when the class loads"). What is left when the heap stays
     * full is in ARCHITECTURE.md ("Out of memory").
     */

    /** What the constructor puts into the LIFO slot and takes back, to link pushLifo's call sites. */
    private static final Runnable LINKING = () -> {};

    private static final VarHandle LIFO;
    private static final VarHandle SUBMITTED;
    private static final VarHandle ENDED;
    private static final VarHandle POLLS;
    private static final VarHandle LIFO_HITS;
    private static final VarHandle STEALS;
    private static final VarHandle INJECTOR_BATCHES;
    private static final VarHandle PARKS;
    private static final VarHandle CANCELLED_JOBS;
    private static final VarHandle BUSY;
    private static final VarHandle AWAKE_SINCE;
    private static final VarHandle BUSY_VERSION;
    private static final VarHandle BUSY_REPORTED;
    private static final VarHandle AWAKE_SPINS;
    /** Worker.turn; not final, so the JIT cannot inline it into run()'s eternal loop (see the notes). */
    private static MethodHandle turn;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            turn = lookup.findVirtual(Worker.class, "turn", MethodType.methodType(void.class));
            LIFO = lookup.findVarHandle(Worker.class, "lifo", Runnable.class);
            SUBMITTED = lookup.findVarHandle(Worker.class, "submitted", long.class);
            ENDED = lookup.findVarHandle(Worker.class, "ended", long.class);
            POLLS = lookup.findVarHandle(Worker.class, "polls", long.class);
            LIFO_HITS = lookup.findVarHandle(Worker.class, "lifoHits", long.class);
            STEALS = lookup.findVarHandle(Worker.class, "steals", long.class);
            INJECTOR_BATCHES = lookup.findVarHandle(Worker.class, "injectorBatches", long.class);
            PARKS = lookup.findVarHandle(Worker.class, "parks", long.class);
            CANCELLED_JOBS = lookup.findVarHandle(Worker.class, "cancelledJobs", long.class);
            BUSY = lookup.findVarHandle(Worker.class, "busyNanos", long.class);
            AWAKE_SINCE = lookup.findVarHandle(Worker.class, "awakeSinceNanos", long.class);
            BUSY_VERSION = lookup.findVarHandle(Worker.class, "busyVersion", long.class);
            BUSY_REPORTED = lookup.findVarHandle(Worker.class, "busyReported", long.class);
            AWAKE_SPINS = lookup.findVarHandle(Worker.class, "awakeSpins", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    static final int BUDGET = 128;
    static final int MAX_LIFO_POLLS = 3;

    /** At most this many tasks run in one call of turn (see the notes). */
    static final int TASKS_PER_TURN = 64;
    /** How many turns the loop calls directly after a failed one (see the notes, "Failures"). */
    private static final int DIRECT_TURNS_AFTER_FAILURE = 1024;
    /** How long the loop pauses after a turn failed (see the notes, "Failures"). */
    private static final long FAILED_TURN_PAUSE_NANOS = 1_000_000L;
    /** The local queue's first length; it doubles when full, up to the configured capacity. */
    static final int INITIAL_QUEUE_CAPACITY = 256;
    /** How many idle runner fibers a worker keeps for its next jobs; more end. */
    static final int MAX_IDLE_RUNNERS = 32;

    static final long PARK_TIMEOUT_NANOS = 10_000_000L;
    static final long TARGET_INJECTOR_LATENCY_NANOS = 200_000L;
    static final int MIN_INTERVAL = 8;
    static final int MAX_INTERVAL = 255;
    private static final double EWMA_ALPHA = 0.1;
    static final int SPINS = 4;
    static final int YIELDS = 16;
    /** How long a worker that ran something stays awake for more work before it parks; see the notes. */
    static final long IDLE_SPIN_NANOS = 50_000;
    /** How often a spinning worker looks at other workers' queues (the Injector: every try); see the notes. */
    static final long LOOK_AROUND_NANOS = 10_000;
    /** The spin's clock (spinForWork); a test passes a scripted one. */
    private static final LongSupplier NANO_TIME = System::nanoTime;

    final int index;
    final RunQueue queue;
    final Parker parker = new Parker();
    private final Scheduler scheduler;
    private final SplittableRandom random;
    private final Runnable[] batch = new Runnable[64];

    /** The LIFO slot: filled by this thread, emptied by getAndSet by this thread or a stealer. */
    private volatile Runnable lifo;
    /** Set while this worker parks: execute() must not use the LIFO slot. This thread writes. */
    volatile boolean transitioningToPark;
    /** Set while this thread starts or resumes a runner: Scheduler.execute stores its continuation in `captured`. */
    boolean capturing;
    /** The runner whose fiber this thread is starting now (the thread container's factory reads it), or null. */
    Runner startingRunner;

    Runnable captured;
    /** Set while this worker fires timers: what they ready goes to the back of the queue. */
    boolean firingTimers;
    /** What a runner that unmounted left for this loop to run next (a continuation), or null. */
    private Runnable handOff;
    /** Parked runner fibers with no job; a LIFO stack (the most recent is the warmest). */
    private final Runner[] idleRunners = new Runner[MAX_IDLE_RUNNERS];

    private int idleCount;
    private int lifoPolls;
    private boolean searching;
    private int ranSinceMaintenance;
    /** Counts down to the next "Injector first" poll (no division per poll). */
    private int untilInjectorCheck = 32;

    private boolean checkInjectorFirst = true;
    private int injectorInterval = 32;
    private double averageTaskNanos = TARGET_INJECTOR_LATENCY_NANOS / 32.0;
    private long batchStartNanos;
    /**
     * Jobs submitted from this worker's carrier, and jobs that ended on it: the live-task count's
     * cells (Scheduler.liveTasks). Only code running on this carrier writes them (the loop, or a
     * fiber mounted on it that cannot leave it before the write: Scheduler, "No pin on the
     * owner's paths"), with release stores; readers use acquire loads. No RMW.
     */
    @SuppressWarnings("unused") // through SUBMITTED
    private long submitted;

    @SuppressWarnings("unused") // through ENDED
    private long ended;

    /*
     * Metrics (FiberIo.metrics): counters written only by this worker's carrier with plain
     * increments (no atomic, no fence: a few cycles on paths that already touch this object),
     * read by a snapshot from any thread with opaque loads. A snapshot may lag the counts by a
     * few events; each count only grows.
     */
    private long polls;
    private long lifoHits;
    private long steals;
    private long injectorBatches;
    private long parks;
    private long cancelledJobs;
    /** Time this carrier spent out of park (running or looking for work), up to its last park. */
    private long busyNanos;
    /** When this carrier last came out of park (or started); 0 while parked or not running. */
    private long awakeSinceNanos;
    /** Odd while the owner changes busyNanos and awakeSinceNanos together (see setBusy). */
    private long busyVersion;
    /** The most busy time a snapshot reported (readers only, by CAS): later ones never say less. */
    private long busyReported;

    Worker(int index, Scheduler scheduler, int queueCapacity, long seed) {
        this(index, scheduler, queueCapacity, seed, false);
    }

    Worker(int index, Scheduler scheduler, int queueCapacity, long seed, boolean spare) {
        this.index = index;
        this.scheduler = scheduler;
        this.queue = RunQueue.growing(Math.min(INITIAL_QUEUE_CAPACITY, queueCapacity), queueCapacity, this);
        this.random = new SplittableRandom(seed * 31 + index);
        this.spare = spare;
        this.active = !spare;
        linkPushLifo();
    }

    /**
     * Runs every VarHandle call site of pushLifo and putBackEvicted once, before the worker runs: a
     * call site's first run allocates, and with join helping a program's first wake-up of a fiber
     * may come only once its heap is full (see the notes, "Failures"); putBackEvicted runs only
     * when the heap is full. Nothing else sees this worker yet.
     */
    private void linkPushLifo() {
        pushLifo(LINKING); // the empty slot's store
        pushLifo(LINKING); // the swap, and the evicted task's push to the queue
        putBackEvicted(LINKING, LINKING); // its CAS (the slot holds LINKING: it succeeds)
        LIFO.setRelease(this, (Runnable) null);
        queue.pop();
    }

    /**
     * Whether this is a spare: a worker the stall watch starts when a worker stays inside one task
     * with work queued behind it (Scheduler.activateSpare), and that retires when it has been idle
     * for SPARE_LINGER_NANOS.
     */
    final boolean spare;
    /**
     * Whether a carrier runs (or is about to run) this worker's loop: always for a configured
     * worker; for a spare, from its activation until its carrier's last act after retiring.
     */
    volatile boolean active;
    /** The carrier thread of this worker's loop now (a spare gets a new one each activation), or null. */
    volatile WorkerThread carrier;
    /** For a newly activated spare: the stalled worker to steal from first, or -1. */
    volatile int handOffFrom = -1;
    /** Set by a spare's park when it retires: its loop ends. Owner only. */
    private boolean retired;
    /** A spare: since when it has run nothing (its polls at that time), for retiring. Owner only. */
    private long idleSinceNanos;

    private long pollsWhenIdle = -1;
    /** Polls when this worker last began to spin for work (spinForWork). Owner only. */
    private long pollsAtLastSpin;
    /**
     * How many idle spins stayed awake up to IDLE_SPIN_NANOS (the worker had run something since
     * its previous look came up empty); the others stopped after YIELDS tries. Written by the
     * owner, plain; read by tests with an opaque load.
     */
    private long awakeSpins;

    /** How long an idle spare stays parked, ready for more work, before it retires. */
    static final long SPARE_LINGER_NANOS = 20_000_000L;

    /** Returns whether this worker belongs to {@code owner}. */
    boolean isOf(Scheduler owner) {
        return scheduler == owner;
    }

    /**
     * Puts a task woken or spawned by a fiber running on this worker into the LIFO slot; returns
     * whether that evicted a task into the local queue (then idle workers may want to steal it).
     * If the evicted task cannot be queued (a full queue whose overflow finds no memory), it goes
     * into one of the Injector's rescue slots (Injector, "Rescue slots"); if every one is taken,
     * it goes back into the slot and the failure is thrown: {@code task} is not queued, and
     * nothing is lost (the JDK retries an unpark's submission that threw OutOfMemoryError; a failure of another
     * kind would not be retried, but the queue's pushes fail only for want of memory). If a
     * stealer took {@code task} meanwhile, nothing is thrown and the evicted task stays in the slot.
     */
    boolean pushLifo(Runnable task) {
        if (lifo == null) {
            // Only this worker fills the slot (stealers only empty it), so an empty slot stays empty
            // until this store: no atomic swap needed
            LIFO.setRelease(this, task);
            return false;
        }
        Runnable evicted = (Runnable) LIFO.getAndSet(this, task);
        if (evicted != null) {
            try {
                queue.push(evicted, scheduler.injector);
            } catch (RuntimeException | Error failure) {
                if (!scheduler.injector.putRescued(evicted) && putBackEvicted(task, evicted)) {
                    throw failure; // task is not queued, and nothing is lost
                }
            }
            return true;
        }
        return false;
    }

    /**
     * After pushLifo's queueing of {@code evicted} threw: puts {@code evicted} back into the slot in
     * place of {@code task} and returns true, so pushLifo throws and the caller's push fails (the
     * JDK retries an unpark's submission). Before this, the evicted task was dropped: a fiber that
     * never resumed. If a stealer took {@code task} from the slot meanwhile, it is queued after
     * all: {@code evicted} goes into the empty slot (only this worker fills it) and this returns
     * false, since a retry would queue {@code task} twice.
     */
    private boolean putBackEvicted(Runnable task, Runnable evicted) {
        if (LIFO.compareAndSet(this, task, evicted)) {
            return true;
        }
        LIFO.setRelease(this, evicted);
        return false;
    }

    /**
     * Queues a job (a task that has not started) spawned by a fiber running on this worker: into
     * the LIFO slot if it is empty, else at the back of the local queue, leaving the slot's task
     * where it is. Returns whether the job went to the queue (then idle workers may want to
     * steal it). See "Spawns and the LIFO slot" in the notes.
     */
    boolean pushJob(RawTask job) {
        if (lifo == null) {
            LIFO.setRelease(this, job); // only this worker fills the slot: see pushLifo
            return false;
        }
        queue.push(job, scheduler.injector);
        return true;
    }

    /** Removes {@code job} from this worker's queue if it is the oldest there; only this carrier calls it. */
    void dropHead(RawTask job) {
        queue.popIfHead(job);
    }

    /** Takes the task in the LIFO slot, or null; by this worker or a stealer. */
    Runnable takeLifo() {
        return lifo == null ? null : (Runnable) LIFO.getAndSet(this, (Runnable) null);
    }

    /** Returns whether the LIFO slot holds a task. */
    boolean hasLifo() {
        return lifo != null;
    }

    /** Counts a job submitted from this carrier; only this carrier calls it, before publishing the job. */
    void countSubmitted() {
        SUBMITTED.setRelease(this, submitted + 1);
    }

    /** Takes back countSubmitted for a job whose push failed; only this carrier calls it. */
    void uncountSubmitted() {
        SUBMITTED.setRelease(this, submitted - 1);
    }

    /** Counts a job that ended on this carrier; only this carrier calls it. */
    void countEnded() {
        ENDED.setRelease(this, ended + 1);
    }

    long submittedCount() {
        return (long) SUBMITTED.getAcquire(this);
    }

    long endedCount() {
        return (long) ENDED.getAcquire(this);
    }

    /** Puts a task at the back of the local queue (a yield, or a timer fired by this worker). */
    void pushBack(Runnable task) {
        queue.push(task, scheduler.injector);
    }

    /**
     * Makes this worker's next pick look at the Injector first ("Finding work", step 0). Called on
     * this worker's thread, with no fiber mounted, once it queued a fiber the JDK re-submitted
     * there: one that yielded (or whose park raced its unpark, or that a timer this loop fired
     * readied; timers a runner fires reach the queue without this call, which is harmless).
     */
    void lookAtInjectorNext() {
        checkInjectorFirst = true;
    }

    @Override
    public void run() {
        if (spare) {
            parker.rebind(Thread.currentThread()); // a new carrier at each activation
            retired = false;
            searching = true; // IdleWorkers.activate counted it as searching
            pollsWhenIdle = -1; // timed for retiring from its first park in this activation
        } else {
            parker.bind(Thread.currentThread());
        }
        if (Thread.currentThread() instanceof WorkerThread self && !scheduler.clockIsVirtual()) {
            self.osTid = OsThreads.currentTid(); // for the stall watch (one readlink per carrier start)
        }
        batchStartNanos = System.nanoTime();
        setBusy(busyNanos, batchStartNanos);
        int directTurns = 0;
        while (!scheduler.isStopped() && !retired) {
            try {
                if (directTurns > 0) { // after a failure: the handle's call may itself need memory
                    directTurns--;
                    turn();
                } else {
                    turn.invokeExact(this);
                }
            } catch (Throwable t) { // see the notes, "Failures": reported, and the loop goes on
                Scheduler.reportUncaught(t);
                directTurns = DIRECT_TURNS_AFTER_FAILURE;
                LockSupport.parkNanos(this, FAILED_TURN_PAUSE_NANOS); // the next turn would likely fail again at once
            }
        }
        long leftAt = System.nanoTime();
        setBusy(busyNanos + Math.max(0, leftAt - awakeSinceNanos), 0); // no longer awake: retired or stopped
        if (retired) {
            active = false; // the last act: the stall watch may start this spare again from now on
            return;
        }
        drainAtStop();
    }

    /**
     * One turn of the loop: runs the next tasks, at most TASKS_PER_TURN, while there are any and
     * the worker goes on; spins or parks (and returns) when there is none.
     */
    private void turn() {
        for (int ran = 0; ran < TASKS_PER_TURN; ran++) {
            Runnable task = handOff;
            if (task != null) {
                handOff = null;
            } else {
                task = findWork();
            }
            if (task instanceof RawTask job) {
                startJob(job);
            } else if (task != null) {
                runTask(task);
            } else {
                if (!spinForWork()) {
                    park();
                }
                return;
            }
            if (scheduler.isStopped()) {
                return; // the loop drains what is left
            }
        }
    }

    /**
     * A queued job that will never run left its queue: an awaiter ran it in place and counted its
     * end, or it was cancelled before it started, and its end is counted here, as a runner would
     * after finding it done (no runner mounts). This worker's carrier only.
     */
    private void skipped(Task<?> queued) {
        if (!queued.ranInPlace()) {
            countEnded();
            scheduler.taskEnded();
            cancelledJobs++;
        }
    }

    /** RunQueue.Sweeper: a full local queue may drop a job that will never run (see RunQueue's notes). */
    @Override
    public boolean isDead(Runnable task) {
        return task instanceof Task<?> queued && queued.nothingToRun();
    }

    /** RunQueue.Sweeper: the full local queue dropped {@code task}, which {@link #isDead} called dead. */
    @Override
    public void dropped(Runnable task) {
        skipped((Task<?>) task);
    }

    /** Returns the next task (searching bookkeeping included), or null if there is none anywhere. */
    private Runnable findWork() {
        Runnable task = nextTask();
        while (task instanceof Task<?> queued && queued.nothingToRun()) {
            skipped(queued);
            task = nextTask();
        }
        if (task != null && searching) {
            searching = false;
            if (scheduler.idle.transitionFromSearching()) {
                scheduler.notifyParked();
            }
        }
        return task;
    }

    /**
     * Runs a fiber's continuation (mounts the fiber until it parks, yields or ends). A mount that
     * ended jobs was counted by nextForRunner, a poll per job; one that ended none is one poll.
     */
    private void runTask(Runnable task) {
        long before = polls; // a runner's mount stays on this carrier: its nextForRunner calls count here
        try {
            task.run();
        } catch (Throwable t) {
            Scheduler.reportUncaught(t);
        }
        if (polls == before) {
            afterTask();
        }
    }

    /** Counts one task run; every BUDGET tasks, maintenance. */
    private void afterTask() {
        polls++;
        if (--untilInjectorCheck <= 0) {
            untilInjectorCheck = injectorInterval;
            checkInjectorFirst = true;
        }
        if (++ranSinceMaintenance >= BUDGET) {
            maintenance();
        }
    }

    /**
     * Runs {@code job} on a runner fiber: an idle one from this worker's pool, else a new one. The
     * runner's continuation is captured by Scheduler.execute (this thread, `capturing` set) and
     * run here at once.
     */
    private void startJob(RawTask job) {
        Runner runner = idleCount > 0 ? idleRunners[--idleCount] : null;
        capturing = true;
        try {
            if (runner != null) {
                idleRunners[idleCount] = null;
                runner.assign(job);
            } else {
                try {
                    runner = new Runner(scheduler, job); // in the try: out of memory here, the job is settled too
                    scheduler.runnerStarted(runner);
                    scheduler.startRunner(this, runner);
                } catch (RuntimeException | Error e) {
                    // No longer capturing: the settle below can ready a fiber right here (a waiter of the
                    // cancelled task), whose continuation must go to a queue, not into `captured`
                    capturing = false;
                    // Nothing to run: VirtualThread.start throws only if its submit did not happen
                    // (it settles the thread itself then), and nothing after the submit can throw
                    assert captured == null : "a runner's continuation was handed over, then its start threw";
                    captured = null;
                    if (runner != null) {
                        scheduler.runnerEnded(runner);
                    }
                    scheduler.discard(job); // never runs: cancelled and counted, not dropped
                    if (!(e instanceof RejectedExecutionException && scheduler.isStopped())) {
                        Scheduler.reportUncaught(e); // the JDK could not start a thread (out of memory...)
                    }
                    // Not thrown: that would end this thread and strand what is queued here. Refused
                    // because stop() shut the runner container after this worker last looked at
                    // `stopped`, the loop sees it next and drains; otherwise the worker goes on.
                    return;
                }
            }
        } finally {
            capturing = false;
        }
        Runnable continuation = captured;
        captured = null;
        if (continuation != null) {
            runTask(continuation);
        } else if (runner.tryReclaimIfEnded(job)) {
            // The runner had ended while in the pool (its loop threw): the job goes to the next one
            startJob(job);
        } // else: a stray wake-up has the runner running elsewhere; it takes the job there
    }

    /**
     * Called by a runner fiber mounted on this worker (pinned) whose job {@code done} ended:
     * counts it, then returns the next job for the runner to run in place, or null after putting
     * it in the idle pool (the worker's loop runs whatever else was found), or {@link Runner#STOP}
     * if it should end: always when it {@code retires} (the loop then finds the next work itself).
     */
    RawTask nextForRunner(Runner runner, RawTask done, boolean retires) {
        if (!(done instanceof Task<?> task && task.ranInPlace())) { // a helped task was counted by its helper
            countEnded();
            scheduler.taskEnded();
            if (done instanceof Task<?> task && task.state() == Future.State.CANCELLED) {
                cancelledJobs++;
            }
        }
        afterTask();
        if (retires || scheduler.isStopped()) {
            return Runner.STOP;
        }
        Runnable task = findWork();
        if (task instanceof RawTask job) {
            return job;
        }
        handOff = task; // a continuation (or nothing): for the loop, once the runner has unmounted
        if (spare || idleCount == idleRunners.length) { // a spare keeps no idle runners: it may retire
            return Runner.STOP;
        }
        idleRunners[idleCount++] = runner;
        return null;
    }

    /**
     * Takes {@code runner} out of this worker's idle pool, if it is there, and returns whether it
     * was. Called on this worker's own thread by the runner itself, pinned (Scheduler.leaveIdlePool):
     * running it, this worker cannot be taking it from the pool meanwhile.
     */
    boolean leaveIdlePool(Runner runner) {
        for (int i = 0; i < idleCount; i++) {
            if (idleRunners[i] == runner) {
                idleRunners[i] = idleRunners[--idleCount];
                idleRunners[idleCount] = null;
                return true;
            }
        }
        return false;
    }

    /**
     * For the stall watch and stop() (Scheduler.wakeRunnersParkedOnCarriers): unparks a runner
     * of this worker's idle pool whose park is on this worker's carrier (it could not unmount), if
     * there is one, to leave the pool and end (Runner.wakeToLeave).
     * Read from another thread, the pool is racy: the whole array is read, not up to idleCount,
     * and Carriers.parkedOnCarrier decides (a fiber parked on this carrier is mounted here, so
     * only the worker's current fiber can pass). A wrong pick (a runner since taken, parked on the
     * carrier in its job) is a stray wake-up, which a job's park loop takes in its stride; its
     * `leave` stays set, so it ends at its next stray wake-up on this worker while idle (a new
     * runner costs about a microsecond). Between the check and the unpark the runner may have
     * been woken and parked again unmounted: then the unpark resubmits it, which may allocate (and
     * with the heap full the JDK retries it every 100 ms on this thread). See Runner's notes,
     * "Parked on the carrier".
     */
    void wakeRunnerParkedOnCarrier() {
        WorkerThread thread = carrier;
        if (thread == null) {
            return;
        }
        for (Runner runner : idleRunners) {
            Thread fiber = runner == null ? null : runner.thread;
            if (fiber != null && Carriers.parkedOnCarrier(fiber, thread)) {
                runner.wakeToLeave();
                return; // one fiber at most is mounted on the carrier
            }
        }
    }

    /**
     * How many tasks a worker runs between two looks at the Injector when a task takes {@code
     * averageTaskNanos} on average: TARGET_INJECTOR_LATENCY_NANOS worth of them, at least
     * MIN_INTERVAL and at most MAX_INTERVAL.
     */
    static int injectorIntervalFor(double averageTaskNanos) {
        long interval = (long) (TARGET_INJECTOR_LATENCY_NANOS / Math.max(1.0, averageTaskNanos));
        return Math.clamp(interval, MIN_INTERVAL, MAX_INTERVAL);
    }

    private void maintenance() {
        long now = System.nanoTime();
        if (!scheduler.clockIsVirtual()) { // a virtual clock keeps a fixed interval: runs must not depend on timing
            double sample = (double) (now - batchStartNanos) / ranSinceMaintenance;
            averageTaskNanos = EWMA_ALPHA * sample + (1 - EWMA_ALPHA) * averageTaskNanos;
            injectorInterval = injectorIntervalFor(averageTaskNanos);
        }
        ranSinceMaintenance = 0;
        batchStartNanos = now;
        fireTimers();
    }

    /**
     * Fires the due timers. Timers fired here go to the back of the local queue, even when a runner
     * fiber runs this (DESIGN §5). A failure (a readied thread whose scheduler throws) goes to the
     * uncaught-exception handler: it must never end the worker, or timers would stop for good.
     */
    private void fireTimers() {
        firingTimers = true;
        try {
            scheduler.fireDueTimers();
        } catch (Throwable t) {
            Scheduler.reportUncaught(t);
        } finally {
            firingTimers = false;
        }
    }

    /**
     * On the way out after stop: what is still queued here will never run here. Jobs are
     * abandoned (their tasks cancelled, so nobody waits on them forever); fibers' continuations
     * go on on the JDK's default scheduler (Scheduler.discard); idle runners are ended.
     */
    private void drainAtStop() {
        Runnable slot = (Runnable) LIFO.getAndSet(this, (Runnable) null);
        if (slot != null) {
            scheduler.discard(slot);
        }
        if (handOff != null) {
            scheduler.discard(handOff);
            handOff = null;
        }
        // Always: jobs may be queued behind an empty slot and hand-off
        for (Runnable task = queue.pop(); task != null; task = queue.pop()) {
            scheduler.discard(task);
        }
        while (idleCount > 0) {
            Runner runner = idleRunners[--idleCount];
            idleRunners[idleCount] = null;
            capturing = true;
            try {
                runner.assign(Runner.STOP);
            } finally {
                capturing = false;
            }
            Runnable continuation = captured;
            captured = null;
            if (continuation != null) {
                runTask(continuation); // the runner sees STOP and ends
            }
        }
    }

    /**
     * Called by another thread once the scheduler stopped and this worker's thread did not end (a
     * fiber blocks its carrier): takes what is in the LIFO slot and the queue, as a thief would
     * (safe against the owner), and settles it (Scheduler.discard).
     */
    void drainFromOutside() {
        Runnable slot = takeLifo();
        if (slot != null) {
            scheduler.discard(slot);
        }
        RunQueue into = new RunQueue(queue.maxCapacity()); // owned by the calling thread for this drain
        for (int attempt = 0; attempt < 10_000 && !queue.isEmpty(); attempt++) {
            Runnable task = queue.stealInto(into); // null while the owner's own pop races it: retry
            if (task == null) {
                Thread.onSpinWait();
                continue;
            }
            scheduler.discard(task);
            for (Runnable more; (more = into.pop()) != null; ) {
                scheduler.discard(more);
            }
        }
    }

    /** Returns the next task to run, or null if there is none anywhere. */
    Runnable nextTask() {
        Runnable task;
        if (checkInjectorFirst && !scheduler.injector.isEmpty()) {
            checkInjectorFirst = false;
            // A fair-share batch, not one task: with yield-looping fibers the local queue never
            // empties, and one external task per interval would starve the Injector.
            task = fetchFromInjector();
            if (task != null) {
                lifoPolls = 0;
                return task;
            }
        }
        checkInjectorFirst = false;
        // Exploring: when both hold a task, the seed decides whether the newest ready task (the
        // slot) or the oldest (the queue) runs first; both are legal, and a program must not
        // depend on which. The coin is drawn only then, never on an idle poll (whose count
        // depends on real timing), so a seed replays.
        if (lifoPolls < MAX_LIFO_POLLS
                && !(scheduler.explores && lifo != null && !queue.isEmpty() && random.nextBoolean())) {
            task = takeLifo();
            if (task != null) {
                lifoPolls++;
                lifoHits++;
                return task;
            }
        }
        lifoPolls = 0;
        task = queue.pop();
        if (task != null) {
            return task;
        }
        task = takeLifo();
        if (task != null) {
            lifoHits++;
            return task;
        }
        task = fetchFromInjector();
        if (task != null) {
            return task;
        }
        task = steal();
        if (task != null) {
            return task;
        }
        return fetchFromInjector();
    }

    private Runnable fetchFromInjector() {
        Injector injector = scheduler.injector;
        if (injector.isEmpty()) {
            return null;
        }
        // Room is made (the ring grown) before anything is taken, and no more is taken than fits
        // then: once out of the Injector, a task pushAll failed to queue (no memory to grow the
        // ring, or for the overflow's nodes) would be in no queue at all.
        int share = Injector.fairShare(injector.size(), scheduler.workerCount());
        int n = injector.popBatch(batch, share <= 1 ? share : Math.min(share, queue.roomFor(share - 1) + 1));
        if (n == 0) {
            return null;
        }
        injectorBatches++;
        queue.pushAll(batch, 1, n - 1, injector);
        Runnable first = batch[0];
        Arrays.fill(batch, 0, n, null);
        return first;
    }

    private Runnable steal() {
        Worker[] workers = scheduler.workers;
        int n = scheduler.extent();
        if (n == 1) {
            return null;
        }
        int from = handOffFrom;
        if (from >= 0) { // a new spare: the stalled worker's queue first
            handOffFrom = -1;
            Runnable task = workers[from].queue.stealInto(queue);
            if (task == null && workers[from].queue.isEmpty()) {
                task = workers[from].takeLifo();
            }
            if (task != null) {
                steals++;
                return task; // a spare starts out searching (IdleWorkers.activate): findWork ends the search
            }
        }
        if (!searching) {
            if (!scheduler.idle.tryBecomeSearcher()) {
                return null;
            }
            searching = true;
        }
        int start = random.nextInt(n);
        for (int i = 0; i < n; i++) {
            Worker victim = workers[(start + i) % n];
            if (victim != this) {
                Runnable task = victim.queue.stealInto(queue);
                if (task == null && victim.queue.isEmpty()) {
                    task = victim.takeLifo(); // a slot its owner is not getting to
                }
                if (task != null) {
                    steals++;
                    return task;
                }
            }
        }
        return null;
    }

    /**
     * Spins for work before parking; returns true if work may have arrived. A worker that ran
     * something since its previous look came up empty stays awake (yielding its core) up to
     * IDLE_SPIN_NANOS; otherwise (a park timeout, a notifier whose work another worker took) it
     * spins SPINS times, then yields until YIELDS tries. Each try looks at the Injector; other
     * workers' queues are looked at every LOOK_AROUND_NANOS and on the last try. See "Spinning"
     * in the notes.
     */
    boolean spinForWork() {
        if (!scheduler.spinBeforeParking || scheduler.clockIsVirtual()) {
            return false; // idle time is when a virtual clock advances: do not burn it
        }
        boolean stayAwake = polls != pollsAtLastSpin; // it ran something since its previous look came up empty
        pollsAtLastSpin = polls;
        return spinForWork(NANO_TIME, stayAwake);
    }

    /**
     * The spin itself, on the given clock (nanoseconds) and staying awake or not as told: the seam
     * a test scripts to count the tries between two looks at other workers' queues. The clock is
     * read once when the spin begins and once per try after the first SPINS.
     */
    boolean spinForWork(LongSupplier clock, boolean stayAwake) {
        long began = clock.getAsLong();
        if (stayAwake) {
            awakeSpins++;
        }
        // findWork has just looked (its steal, unless another worker is the searcher and will)
        long lookedAround = began;
        long now;
        boolean found;
        for (int i = 0; ; i++) {
            now = i < SPINS ? lookedAround : clock.getAsLong(); // no clock read in the first spins
            boolean everywhere = now - lookedAround >= LOOK_AROUND_NANOS;
            if (everywhere) {
                lookedAround = now;
            }
            // The Injector on every try, other workers' queues now and then (see "Spinning")
            if ((everywhere ? scheduler.isQueuedWorkPending() : !scheduler.injector.isEmpty())
                    || scheduler.isStopped()) {
                found = true;
                break;
            }
            if (i < SPINS) {
                Thread.onSpinWait();
            } else if (i < YIELDS || stayAwake && now - began < IDLE_SPIN_NANOS) {
                Thread.yield(); // gives the core to any other runnable thread
            } else {
                // a last look at every queue before giving up, unless this try has just made it
                found = !everywhere && scheduler.isQueuedWorkPending();
                break;
            }
        }
        if (stayAwake) {
            // The EWMA measures time running tasks, not this wait (up to the last try's clock read:
            // a spin that ends within its first SPINS tries, well under a microsecond, counts none).
            batchStartNanos += now - began;
        }
        return found;
    }

    private void park() {
        Runnable hook = scheduler.beforePark;
        if (hook != null) {
            hook.run(); // tests: act in the window between "found nothing" and "counted as parked"
        }
        IdleWorkers idle = scheduler.idle;
        transitioningToPark = true;
        boolean wasSearching = searching;
        searching = false;
        boolean lastSearcher = idle.transitionToParked(index, wasSearching);
        boolean skipPark = false;
        if (lastSearcher ? scheduler.isWorkPending() : scheduler.isQueuedWorkPending()) {
            // Every parking worker re-checks, searching or not: a task pushed since its last look
            // found it still counted as unparked, so its producer woke nobody (the window that
            // left such a task waiting for the park timeout). The last searcher wakes another
            // worker as well, since producers skipped notifying while it searched.
            if (lastSearcher) {
                scheduler.notifyParked();
            }
            skipPark = true;
        } else if (idle.unparked() == 0 && advanceClockSafely()) {
            scheduler.notifyParked(); // the fired timers made work: wake (likely this) worker
        }
        if (!skipPark && !scheduler.isStopped()) {
            long parkedAt = System.nanoTime();
            if (spare && polls != pollsWhenIdle) { // it ran something since it last went idle
                pollsWhenIdle = polls;
                idleSinceNanos = parkedAt;
            }
            parks++;
            setBusy(busyNanos + (parkedAt - awakeSinceNanos), 0);
            // up to the next timer; a spare lingers, ready for more work, before it retires
            parker.park(scheduler.parkTimeoutNanos(spare ? SPARE_LINGER_NANOS : scheduler.maxParkNanos));
            long woke = System.nanoTime();
            setBusy(busyNanos, woke);
            batchStartNanos += woke - parkedAt; // the EWMA measures time running tasks
            if (spare && woke - idleSinceNanos >= SPARE_LINGER_NANOS && scheduler.idle.retire(index)) {
                // It ran nothing for a whole linger (over several parks, if timers woke it) and
                // nobody woke it this time (still in the parked set, now taken out for good): it
                // retires. Its queue and slot are empty (it
                // found no work before parking, and only its own carrier fills them) and it keeps
                // no idle runners. Timers due later are fired by the other workers, or, if every
                // one is stuck, by a spare the stall watch starts then.
                transitioningToPark = false;
                retired = true;
                return;
            }
        }
        transitioningToPark = false;
        if (!idle.unparkWorkerById(index)) {
            searching = true; // a notifier took us out of the parked set and counted us searching
        }
        fireTimers();
    }

    /** Advances a virtual clock (see Scheduler); a failure while firing is reported, not fatal. */
    private boolean advanceClockSafely() {
        try {
            return scheduler.advanceVirtualClock();
        } catch (Throwable t) {
            Scheduler.reportUncaught(t);
            return true; // something fired: look for work again
        }
    }

    /**
     * This worker's progress count now, from any thread (the stall watch): tasks polled plus tasks
     * ended on it, so a task running others in place (join helping) counts as moving.
     */
    long progress() {
        return (long) POLLS.getOpaque(this) + (long) ENDED.getOpaque(this);
    }

    /** Whether this worker's queue or LIFO slot holds work, from any thread. */
    boolean hasQueuedWork() {
        return !queue.isEmpty() || lifo != null;
    }

    /**
     * A mark that changes when work leaves this worker's queue or LIFO slot (a steal, a pop, the
     * slot taken or refilled), from any thread: the stall watch tells work nobody takes from work
     * others are taking.
     */
    long queueMark() {
        return queue.headWord() * 31 + System.identityHashCode(lifo);
    }

    /** When the batch the injector interval's EWMA is timing began (tests; owner thread only). */
    long batchStartNanos() {
        return batchStartNanos;
    }

    /** How many idle spins stayed awake (see the field); from any thread. */
    long awakeSpins() {
        return (long) AWAKE_SPINS.getOpaque(this);
    }

    /**
     * The owner's one way to change the busy pair: a seqlock (odd version while changing, the
     * stores ordered by the fences), so that metrics() reads a pair that belonged together. Read
     * apart, a reader could add an awake period twice (the time since a stale wake on top of a
     * total that already counted it) and a later snapshot then read less: busy went down. Two
     * stores and a fence per park and wake, off the per-task path.
     */
    private void setBusy(long busy, long since) {
        long v = busyVersion;
        BUSY_VERSION.setOpaque(this, v + 1);
        VarHandle.storeStoreFence();
        BUSY.setOpaque(this, busy);
        AWAKE_SINCE.setOpaque(this, since);
        BUSY_VERSION.setRelease(this, v + 2);
    }

    /**
     * A snapshot of this worker's counters, from any thread: polls, LIFO hits, steals, injector
     * batches, parks, cancelled jobs, busy nanoseconds (up to the last park, plus the time since
     * if it is awake now), local queue depth.
     */
    long[] metrics() {
        long busy;
        long since;
        while (true) {
            long v = (long) BUSY_VERSION.getAcquire(this);
            busy = (long) BUSY.getOpaque(this);
            since = (long) AWAKE_SINCE.getOpaque(this);
            VarHandle.loadLoadFence();
            if ((v & 1) == 0 && v == (long) BUSY_VERSION.getOpaque(this)) {
                break;
            }
            Thread.onSpinWait(); // the owner is between the two stores of a park or wake
        }
        long estimate = since != 0 ? busy + Math.max(0, System.nanoTime() - since) : busy;
        // An awake worker's estimate runs to this reader's clock; the worker then records its
        // park at its own earlier reading, a few microseconds less: the high-water mark keeps
        // the counter from going down (it may run ahead by that much until the next wake)
        long reported;
        do {
            reported = (long) BUSY_REPORTED.getOpaque(this);
        } while (estimate > reported && !BUSY_REPORTED.compareAndSet(this, reported, estimate));
        estimate = Math.max(estimate, reported);
        return new long[] {
            (long) POLLS.getOpaque(this),
            (long) LIFO_HITS.getOpaque(this),
            (long) STEALS.getOpaque(this),
            (long) INJECTOR_BATCHES.getOpaque(this),
            (long) PARKS.getOpaque(this),
            (long) CANCELLED_JOBS.getOpaque(this),
            estimate,
            queue.size() + (lifo != null ? 1 : 0)
        };
    }

    @Override
    public String toString() {
        return "Worker#" + index + "[queue=" + queue.size() + (lifo != null ? ", lifo" : "")
                + (searching ? ", searching" : "") + "]";
    }
}
