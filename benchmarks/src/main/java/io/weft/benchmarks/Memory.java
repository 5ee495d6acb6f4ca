package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.fiber.FiberIo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Memory: heap bytes per parked task, with {@value #PARKED_TASKS} tasks parked at once. The result
 * is the secondary metric {@code bytesPerTask} (lower is better); JMH's primary metric, the time
 * of one park/measure/release cycle, is not the measurement. Not thread-safe: JMH runs it on one
 * thread.
 *
 * <ul>
 *   <li>{@code fiber}: {@code Io.async} tasks on FiberIo, each parked in {@code Io.suspendRaw} on
 *       its own {@link ParkToken} (Weft's raw park, under every await, sleep and channel wait);
 *   <li>{@code vthread}: JDK virtual threads on the default scheduler, each running a
 *       {@link FutureTask} (the JDK analogue of {@code Io.async}) parked in
 *       {@link LockSupport#park};
 *   <li>{@code callback}: a reference, not a competitor: a {@link CompletableFuture#thenApply}
 *       stage waiting on one incomplete future, what a waiting task costs with no thread and no
 *       stack at all.
 * </ul>
 *
 * <p>BlockingIo is not measured: it runs a task inline on the thread that spawns it, so 100,000
 * tasks parked at once would need 100,000 platform threads.
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class Memory extends PeerBenchmark {
    /*
     * Implementation notes.
     *
     * One invocation (SingleShotTime: one per iteration) allocates the lists and arrays that
     * hold the handles at full capacity, reads the settled used heap, parks the tasks, waits
     * until every one is parked, reads the settled used heap again, then releases them all and
     * checks every result. The score is (after - before) / PARKED_TASKS, so those arrays and the
     * runtime itself (FiberIo's workers and queues, the JDK scheduler's pool) are in both
     * readings and cancel out; what remains is what each parked task holds: its task record or
     * FutureTask, its thread object, its stack chunk (the frames down to the park), its closure,
     * and (fiber) its ParkToken and live-task entry.
     *
     * "Parked" is checked, not assumed: each task counts down a latch just before it parks, the
     * benchmark thread waits on the latch (a blocking wait, not a sleep), then waits until each
     * task's thread reports WAITING (the fiber or virtual thread has unmounted: its stack is now
     * a heap object). The few still on their way to the park get Thread.yield until they are.
     *
     * Settled used heap: System.gc() (a full, stop-the-world collection under G1 unless
     * -XX:+ExplicitGCInvokesConcurrent) until two readings in a row are within SETTLED_BYTES, at
     * most MAX_GC_ROUNDS times. Used heap is read with Runtime (total - free), which allocates
     * nothing: a MemoryUsage object could take a new TLAB and count all of it as used.
     *
     * Warm-up. Only the stack chunks vary from cycle to cycle (a class histogram per cycle shows
     * every other per-task object at a fixed size): they shrink as the JIT compiles and inlines
     * the frames down to the park. On a busy 2-core machine a fiber's chunk went 2,009, 838,
     * 833, 558, 770, 670, 654 bytes over the first cycles (deoptimizations in between) and then
     * stayed at 648; two JMH warm-up iterations (run.sh quick) left measured cycles 100 to 500
     * bytes high. The command line's -wi applies to every benchmark, so the trial's setup runs
     * WARM_UP_CYCLES cycles of its own, without the collections (they take most of a cycle's
     * time and measure nothing here). What stays is variation between JVM runs, from the JIT's
     * decisions: on that busy machine the means of separate forks ranged 1,083 to 1,317 bytes for
     * fiber and 608 to 713 for vthread (fiber/vthread 1.7 to 2.0), while the iterations within a
     * fork stayed within a few bytes. The fiber's chain down to the park (the runner's
     * context binding at its base, Task.run, ParkToken.suspend) is deeper than a virtual thread's, so it moves by
     * more bytes. -Xbatch did not remove the variation.
     *
     * JMH sums an EVENTS counter over the measurement iterations (its console prints "[Sum]");
     * Report takes the mean of the per-iteration values from the JSON's rawData instead. The
     * smoke run keeps 100,000 tasks: its three trials (11 cycles each) took about 20 seconds.
     */

    /** Tasks parked at once. */
    static final int PARKED_TASKS = 100_000;
    /** Two heap readings this close in a row are taken as settled (0.16 bytes per task at 100,000). */
    static final long SETTLED_BYTES = 16 * 1024;

    static final int MAX_GC_ROUNDS = 10;
    /** Unmeasured park/release cycles in the trial's setup, on top of JMH's warm-up iterations. */
    static final int WARM_UP_CYCLES = 10;
    /** The callback stages' shared function, so a stage allocates no closure of its own. */
    private static final Function<Integer, Integer> PLUS_ONE = value -> value + 1;

    /** The runtime under test: fiber, vthread, or the callback reference. */
    @Param({"fiber", "vthread", "kotlin", "callback"})
    public String peer;

    /** FiberIo for {@code fiber}, nothing for the others (virtual threads use the JDK's scheduler). */
    private Peers peers;
    /** Set by the benchmark thread to release the parked virtual threads; read by them. */
    private volatile boolean released;

    /** The measurement, reported by JMH as a secondary result next to the cycle's time. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Footprint {
        /** Heap bytes per parked task in this iteration's cycle. */
        public double bytesPerTask;
    }

    /** One park/measure/release cycle's outcome. */
    record Cycle(double bytesPerTask, long finished) {}

    /** Starts FiberIo for the {@code fiber} peer, then runs the unmeasured warm-up cycles. */
    @Setup(Level.Trial)
    public void start() {
        peers = peer.equals("callback") ? null : Peers.start(peer);
        for (int i = 0; i < WARM_UP_CYCLES; i++) {
            Peers.check(cycle(false).finished(), PARKED_TASKS);
        }
    }

    /** Stops FiberIo. */
    @TearDown(Level.Trial)
    public void stop() {
        if (peers != null) {
            peers.close();
        }
    }

    /**
     * Parks {@value #PARKED_TASKS} tasks at once, measures the heap they hold, then releases them.
     *
     * @param footprint where the bytes per parked task go
     * @return the number of tasks that finished after release
     */
    @Benchmark
    public long parked(Footprint footprint) {
        Cycle cycle = cycle(true);
        footprint.bytesPerTask = cycle.bytesPerTask();
        return Peers.check(cycle.finished(), PARKED_TASKS);
    }

    /** One cycle; {@code measure == false} skips the collections (a warm-up) and reports NaN bytes. */
    private Cycle cycle(boolean measure) {
        return switch (peer) {
            case "fiber" -> parkFibers(measure);
            case "vthread" -> parkVirtualThreads(measure);
            case "kotlin" -> suspendCoroutines(measure);
            case "callback" -> parkCallbacks(measure);
            default -> throw new IllegalStateException(peer);
        };
    }

    private Cycle parkFibers(boolean measure) {
        FiberIo io = peers.fiber;
        List<Future<Integer>> tasks = new ArrayList<>(PARKED_TASKS);
        ParkToken[] tokens = new ParkToken[PARKED_TASKS];
        Thread[] threads = new Thread[PARKED_TASKS];
        CountDownLatch arrived = new CountDownLatch(PARKED_TASKS);
        long before = measure ? settledUsedHeap() : 0;
        startParkedFibers(peers.weft, io, tasks, tokens, threads, arrived);
        awaitParked(arrived, threads);
        double bytesPerTask = measure ? (settledUsedHeap() - before) / (double) PARKED_TASKS : Double.NaN;
        for (ParkToken park : tokens) {
            io.ready(park);
        }
        long finished = 0;
        for (Future<Integer> task : tasks) {
            finished += task.await();
        }
        return new Cycle(bytesPerTask, finished);
    }

    /**
     * Starts {@code tokens.length} tasks on {@code io} (through {@code weft}, its binding), each of
     * which records its token and thread, counts down {@code arrived} and parks in
     * {@code Io.suspendRaw} until its token is readied; adds them to {@code tasks}, which the caller
     * made at full capacity. Also StackChunkProbe's fiber peer.
     */
    static void startParkedFibers(
            Io.Binding weft,
            FiberIo io,
            List<Future<Integer>> tasks,
            ParkToken[] tokens,
            Thread[] threads,
            CountDownLatch arrived) {
        weft.run(() -> {
            for (int i = 0; i < tokens.length; i++) {
                int index = i;
                tasks.add(Io.async(() -> {
                    ParkToken park = ParkToken.create();
                    tokens[index] = park;
                    threads[index] = Thread.currentThread();
                    arrived.countDown();
                    io.suspendRaw(park);
                    return 1;
                }));
            }
        });
    }

    private Cycle parkVirtualThreads(boolean measure) {
        List<FutureTask<Integer>> tasks = new ArrayList<>(PARKED_TASKS);
        Thread[] threads = new Thread[PARKED_TASKS];
        CountDownLatch arrived = new CountDownLatch(PARKED_TASKS);
        released = false;
        long before = measure ? settledUsedHeap() : 0;
        for (int i = 0; i < PARKED_TASKS; i++) {
            FutureTask<Integer> task = new FutureTask<>(() -> {
                arrived.countDown();
                while (!released) {
                    LockSupport.park(this);
                }
                return 1;
            });
            tasks.add(task);
            threads[i] = Thread.ofVirtual().start(task);
        }
        awaitParked(arrived, threads);
        double bytesPerTask = measure ? (settledUsedHeap() - before) / (double) PARKED_TASKS : Double.NaN;
        released = true;
        for (Thread thread : threads) {
            LockSupport.unpark(thread);
        }
        long finished = 0;
        for (FutureTask<Integer> task : tasks) {
            finished += Peers.get(task);
        }
        return new Cycle(bytesPerTask, finished);
    }

    private Cycle suspendCoroutines(boolean measure) {
        CountDownLatch arrived = new CountDownLatch(PARKED_TASKS);
        KotlinPeer.Suspended suspended = new KotlinPeer.Suspended(PARKED_TASKS);
        long before = measure ? settledUsedHeap() : 0;
        peers.kotlin.startSuspended(suspended, arrived);
        try {
            arrived.await(); // each counts down inside suspendCancellableCoroutine's block, as it suspends
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        double bytesPerTask = measure ? (settledUsedHeap() - before) / (double) PARKED_TASKS : Double.NaN;
        return new Cycle(bytesPerTask, suspended.release());
    }

    private Cycle parkCallbacks(boolean measure) {
        List<CompletableFuture<Integer>> stages = new ArrayList<>(PARKED_TASKS);
        CompletableFuture<Integer> gate = new CompletableFuture<>();
        long before = measure ? settledUsedHeap() : 0;
        for (int i = 0; i < PARKED_TASKS; i++) {
            stages.add(gate.thenApply(PLUS_ONE)); // registered on the gate at once: nothing to wait for
        }
        double bytesPerTask = measure ? (settledUsedHeap() - before) / (double) PARKED_TASKS : Double.NaN;
        gate.complete(0);
        long finished = 0;
        for (CompletableFuture<Integer> stage : stages) {
            finished += stage.join();
        }
        return new Cycle(bytesPerTask, finished);
    }

    /** Returns once every task has counted down {@code arrived} and its thread is parked. */
    static void awaitParked(CountDownLatch arrived, Thread[] threads) {
        try {
            arrived.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        for (Thread thread : threads) {
            // Between its count-down and its park a task is a few instructions from WAITING.
            while (thread.getState() != Thread.State.WAITING) {
                Thread.yield();
            }
        }
    }

    /** The used heap after full collections, once two readings in a row agree (see the notes). */
    private static long settledUsedHeap() {
        Runtime runtime = Runtime.getRuntime();
        System.gc();
        long previous = runtime.totalMemory() - runtime.freeMemory();
        for (int round = 1; round < MAX_GC_ROUNDS; round++) {
            System.gc();
            long used = runtime.totalMemory() - runtime.freeMemory();
            if (Math.abs(used - previous) <= SETTLED_BYTES) {
                return used;
            }
            previous = used;
        }
        return previous;
    }
}
