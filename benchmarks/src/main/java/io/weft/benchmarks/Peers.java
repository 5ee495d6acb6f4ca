package io.weft.benchmarks;

import io.weft.Io;
import io.weft.blocking.BlockingIo;
import io.weft.fiber.FiberIo;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The runtimes a benchmark compares, one per trial, chosen by the {@code peer} parameter. Not
 * thread-safe: made in {@code @Setup(Level.Trial)}, closed in {@code @TearDown}.
 *
 * <ul>
 *   <li>{@code fiber}: {@link FiberIo} with {@link #WORKERS} workers;
 *   <li>{@code vthread}: JDK virtual threads on the default scheduler (nothing to make here; its
 *       parallelism is set to {@link #WORKERS} by {@code -Djdk.virtualThreadScheduler.parallelism}
 *       in {@link PeerBenchmark}'s {@code @Fork}, which every benchmark class extends);
 *   <li>{@code fjp}: {@code new ForkJoinPool(WORKERS)} (LIFO local queues, the default);
 *   <li>{@code tpe}: {@code Executors.newFixedThreadPool(WORKERS)};
 *   <li>{@code reactor}: {@code Schedulers.newParallel(.., WORKERS)};
 *   <li>{@code kotlin}: kotlinx.coroutines on {@code Dispatchers.Default}, sized to {@link #WORKERS}
 *       threads by {@code -Dkotlinx.coroutines.scheduler.core.pool.size} in {@link PeerBenchmark}
 *       ({@link KotlinPeer});
 *   <li>{@code floor}: JDK virtual threads on a trivial two-carrier scheduler of our own
 *       ({@link FloorCarriers}): the physical limit of FiberIo's engine, not a competitor;
 *   <li>{@code blocking}: {@link BlockingIo} on a virtual clock (inline: no threads, so a sleep
 *       returns at once); a floor of Weft's own task machinery, not a competitor.
 * </ul>
 */
final class Peers implements AutoCloseable {
    /** Worker (carrier) threads of every peer: the machine's cores when the suite was set up. */
    static final int WORKERS = 2;

    final String peer;
    final FiberIo fiber;
    final BlockingIo blocking;
    final ForkJoinPool fjp;
    final ExecutorService tpe;
    final Scheduler reactor;
    final KotlinPeer kotlin;
    final FloorCarriers floor;
    /** The Weft Io of {@code fiber} or {@code blocking}, bound once so a call does not allocate it. */
    final Io.Binding weft;

    private Peers(String peer) {
        this.peer = peer;
        this.fiber = peer.equals("fiber")
                ? FiberIo.builder().workers(WORKERS).name("bench").build()
                : null;
        this.blocking =
                peer.equals("blocking") ? BlockingIo.builder().virtualClock().build() : null;
        this.fjp = peer.equals("fjp") ? new ForkJoinPool(WORKERS) : null;
        this.tpe = peer.equals("tpe") ? Executors.newFixedThreadPool(WORKERS) : null;
        this.reactor = peer.equals("reactor") ? Schedulers.newParallel("bench", WORKERS) : null;
        this.kotlin = peer.equals("kotlin") ? new KotlinPeer() : null;
        this.floor = peer.equals("floor") ? new FloorCarriers() : null;
        Io io = fiber != null ? fiber : blocking;
        this.weft = io != null ? Io.with(io) : null;
    }

    /**
     * Starts the runtime named {@code peer}.
     *
     * @param peer one of fiber, vthread, fjp, tpe, reactor, kotlin, floor, blocking
     * @return the started runtime
     * @throws IllegalArgumentException for an unknown name
     */
    static Peers start(String peer) {
        return switch (peer) {
            case "fiber", "vthread", "fjp", "tpe", "reactor", "kotlin", "floor", "blocking" -> new Peers(peer);
            default -> throw new IllegalArgumentException("unknown peer " + peer);
        };
    }

    /** The executor behind the CompletableFuture peers ({@code fjp}, {@code tpe}). */
    Executor executor() {
        return pool();
    }

    /** The pool of the thread-pool peers ({@code fjp}, {@code tpe}). */
    ExecutorService pool() {
        if (fjp != null) {
            return fjp;
        }
        if (tpe != null) {
            return tpe;
        }
        throw new IllegalStateException(peer + " has no pool");
    }

    /** Runs {@code root} as a Weft task on the fiber or blocking Io and waits for its value. */
    <T> T weftCall(Callable<T> root) {
        return weft.call(() -> Io.async(root).await());
    }

    @Override
    public void close() {
        if (fiber != null) {
            fiber.close();
        }
        if (fjp != null) {
            shut(fjp);
        }
        if (tpe != null) {
            shut(tpe);
        }
        if (reactor != null) {
            reactor.dispose();
        }
        if (kotlin != null) {
            kotlin.close();
        }
        if (floor != null) {
            floor.close();
        }
    }

    private static void shut(ExecutorService executor) {
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException(executor + " did not terminate");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- helpers for all workloads

    /**
     * Starts {@code body} on a new virtual thread: on the floor's carriers for {@code floor}, else
     * on the JDK's default scheduler.
     */
    <T> FutureTask<T> startThread(Callable<T> body) {
        return floor != null ? floor.start(body) : startVirtual(body);
    }

    /** Returns an unstarted virtual thread, on the floor's carriers for {@code floor}. */
    Thread unstartedThread(Runnable body) {
        return floor != null ? floor.unstarted(body) : Thread.ofVirtual().unstarted(body);
    }

    /** Starts {@code body} on a new virtual thread (default scheduler); the JDK analogue of {@code Io.async}. */
    static <T> FutureTask<T> startVirtual(Callable<T> body) {
        FutureTask<T> task = new FutureTask<>(body);
        Thread.startVirtualThread(task);
        return task;
    }

    /** Waits for {@code future} and returns its value, failing the benchmark on any failure. */
    static <T> T get(java.util.concurrent.Future<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Joins {@code thread}, failing the benchmark if interrupted. */
    static void join(Thread thread) {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Returns {@code actual} if it equals {@code expected}: the benchmark's own correctness check. */
    static long check(long actual, long expected) {
        if (actual != expected) {
            throw new IllegalStateException("wrong result: " + actual + ", expected " + expected);
        }
        return actual;
    }
}
