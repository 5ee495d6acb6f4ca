package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.fiber.FiberIo;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;

/**
 * A probe of where one operation of spawn_many_local, the await chain or chained_spawn spends its
 * time, outside JMH. For the first two: the caller's {@code io.call} until the root task starts
 * ("enter"), the root's work split into two phases (spawn_many_local: its spawn loop and its await
 * loop; the await chain: its spawn loop and its await of the last link), and the whole call ("op";
 * what is left after enter and the root's work is the caller's wake-up at the end). For
 * chained_spawn: the caller's spawn until the first link starts ("enter"), first link to last
 * ("chain"), the last link's completion until the caller has woken ("exit"), on FiberIo or, for
 * comparison, on a ForkJoinPool of as many workers. Means of 200 operations per round
 * (spawn_many_local) or 2,000 (the others), the last rounds printed.
 *
 * <pre>
 * java --add-opens java.base/java.lang=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar \
 *     io.weft.benchmarks.SplitProbe [spawnManyLocal|awaitChain|chainedSpawn|chainedSpawnFjp] [workers]
 * </pre>
 *
 * The workloads are TokioSuite's spawn_many_local and chained_spawn and Futures' await chain, with
 * timestamps added.
 */
public final class SplitProbe {
    private static final int ROUNDS = 30;
    private static final int REPORTED_ROUNDS = 3;

    /** Written by the first and the last link of a chain, read by the caller after the chain. */
    private static volatile long firstLinkStart;

    private static volatile long lastLinkEnd;

    private SplitProbe() {}

    /**
     * Runs the probe.
     *
     * @param args the workload ({@code spawnManyLocal}, the default, {@code awaitChain},
     *     {@code chainedSpawn} or {@code chainedSpawnFjp}) and the worker count (default 2)
     */
    public static void main(String[] args) {
        String workload = args.length > 0 ? args[0] : "spawnManyLocal";
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        if (workload.equals("chainedSpawnFjp")) {
            ForkJoinPool pool = new ForkJoinPool(workers);
            chains(done -> executorLink(pool, TokioSuite.CHAIN_DEPTH, done));
            pool.shutdown();
            return;
        }
        try (FiberIo io = FiberIo.builder().workers(workers).build()) {
            switch (workload) {
                case "spawnManyLocal" -> rounds(io, 200, SplitProbe::spawnManyLocal);
                case "awaitChain" -> rounds(io, 2_000, SplitProbe::awaitChain);
                case "chainedSpawn" -> chains(done -> io.spawn(() -> fiberLink(TokioSuite.CHAIN_DEPTH, done)));
                default ->
                    throw new IllegalArgumentException(
                            "workload must be spawnManyLocal, awaitChain, chainedSpawn or chainedSpawnFjp, not "
                                    + workload);
            }
        }
    }

    /** The root task's part of one operation: {nanos of phase 1, nanos of phase 2, its start time}. */
    private interface Root {
        long[] run();
    }

    private static void rounds(FiberIo io, int operations, Root root) {
        for (int round = 0; round < ROUNDS; round++) {
            long first = 0;
            long second = 0;
            long enter = 0;
            long op = 0;
            for (int i = 0; i < operations; i++) {
                long began = System.nanoTime();
                long[] inside = io.call(root::run);
                op += System.nanoTime() - began;
                first += inside[0];
                second += inside[1];
                enter += inside[2] - began;
            }
            if (round >= ROUNDS - REPORTED_ROUNDS) {
                double n = operations * 1e3;
                System.out.printf(
                        "root work %.1f + %.1f us, enter %.1f us, op %.1f us%n",
                        first / n, second / n, enter / n, op / n);
            }
        }
    }

    /** TokioSuite.spawnAllAndSum, timed: the spawn loop, then the await loop. */
    private static long[] spawnManyLocal() {
        long start = System.nanoTime();
        List<Future<Integer>> tasks = new ArrayList<>(TokioSuite.SPAWNS);
        for (int i = 0; i < TokioSuite.SPAWNS; i++) {
            tasks.add(Io.async(TokioSuite.ONE));
        }
        long spawned = System.nanoTime();
        long total = 0;
        for (Future<Integer> task : tasks) {
            total += task.await();
        }
        long awaited = System.nanoTime();
        Peers.check(total, TokioSuite.SPAWNS);
        return new long[] {spawned - start, awaited - spawned, start};
    }

    /** Futures' await chain (fiber peer), timed: the spawn loop, then the await of the last link. */
    private static long[] awaitChain() {
        long start = System.nanoTime();
        Future<Integer> previous = Io.async(() -> 0);
        for (int i = 1; i < Futures.CHAIN_LENGTH; i++) {
            Future<Integer> before = previous;
            previous = Io.async(() -> before.await() + 1);
        }
        long spawned = System.nanoTime();
        int last = previous.await();
        long done = System.nanoTime();
        Peers.check(last, Futures.CHAIN_LENGTH - 1);
        return new long[] {spawned - start, done - spawned, start};
    }

    /** How a chain of CHAIN_DEPTH links starts; its last link completes {@code done}. */
    private interface Chain {
        void start(CompletableFuture<Integer> done);
    }

    private static void chains(Chain chain) {
        int operations = 2_000;
        for (int round = 0; round < ROUNDS; round++) {
            long enter = 0;
            long links = 0;
            long exit = 0;
            for (int i = 0; i < operations; i++) {
                CompletableFuture<Integer> done = new CompletableFuture<>();
                long began = System.nanoTime();
                chain.start(done);
                Peers.check(done.join(), TokioSuite.CHAIN_DEPTH);
                long woke = System.nanoTime();
                enter += firstLinkStart - began;
                links += lastLinkEnd - firstLinkStart;
                exit += woke - lastLinkEnd;
            }
            if (round >= ROUNDS - REPORTED_ROUNDS) {
                double n = operations * 1e3;
                System.out.printf(
                        "enter %.1f us, chain %.1f us, exit %.1f us, op %.1f us%n",
                        enter / n, links / n, exit / n, (enter + links + exit) / n);
            }
        }
    }

    /** TokioSuite.fiberLink with the first link's start and the last link's end written down. */
    private static Void fiberLink(int left, CompletableFuture<Integer> done) {
        if (timeLink(left)) {
            done.complete(TokioSuite.CHAIN_DEPTH);
        } else {
            Io.async(() -> fiberLink(left - 1, done));
        }
        return null;
    }

    /** TokioSuite.executorChain, timed like fiberLink. */
    private static void executorLink(Executor executor, int left, CompletableFuture<Integer> done) {
        executor.execute(() -> {
            if (timeLink(left)) {
                done.complete(TokioSuite.CHAIN_DEPTH);
            } else {
                executorLink(executor, left - 1, done);
            }
        });
    }

    /** Writes down the first link's start or the last link's end; returns whether {@code left} is the last. */
    private static boolean timeLink(int left) {
        if (left == TokioSuite.CHAIN_DEPTH) {
            firstLinkStart = System.nanoTime();
        }
        if (left == 1) {
            lastLinkEnd = System.nanoTime();
            return true;
        }
        return false;
    }
}
