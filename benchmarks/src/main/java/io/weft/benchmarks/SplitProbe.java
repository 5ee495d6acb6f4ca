package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.fiber.FiberIo;
import java.util.ArrayList;
import java.util.List;

/**
 * A probe of where one operation of spawn_many_local or of the await chain spends its time,
 * outside JMH: the caller's {@code io.call} until the root task starts ("enter"), the root's work
 * (for spawn_many_local split into its spawn loop and its await loop), and the whole call ("op";
 * what is left after enter and the root's work is the caller's wake-up at the end). Means of 200
 * operations per round (spawn_many_local) or 2,000 (the await chain), the last rounds printed.
 *
 * <pre>
 * java --add-opens java.base/java.lang=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar \
 *     io.weft.benchmarks.SplitProbe [spawnManyLocal|awaitChain] [workers]
 * </pre>
 *
 * The workloads are TokioSuite's spawn_many_local and Futures' await chain, with timestamps
 * added inside the root task.
 */
public final class SplitProbe {
    private static final int ROUNDS = 30;
    private static final int REPORTED_ROUNDS = 3;

    private SplitProbe() {}

    /**
     * Runs the probe.
     *
     * @param args the workload ({@code spawnManyLocal}, the default, or {@code awaitChain}) and the
     *     worker count (default 2)
     */
    public static void main(String[] args) {
        String workload = args.length > 0 ? args[0] : "spawnManyLocal";
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        try (FiberIo io = FiberIo.builder().workers(workers).build()) {
            switch (workload) {
                case "spawnManyLocal" -> rounds(io, 200, SplitProbe::spawnManyLocal);
                case "awaitChain" -> rounds(io, 2_000, SplitProbe::awaitChain);
                default ->
                    throw new IllegalArgumentException(
                            "workload must be spawnManyLocal or awaitChain, not " + workload);
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

    /** Futures' await chain (fiber peer), timed as one phase. */
    private static long[] awaitChain() {
        long start = System.nanoTime();
        Future<Integer> previous = Io.async(() -> 0);
        for (int i = 1; i < Futures.CHAIN_LENGTH; i++) {
            Future<Integer> before = previous;
            previous = Io.async(() -> before.await() + 1);
        }
        int last = previous.await();
        long done = System.nanoTime();
        Peers.check(last, Futures.CHAIN_LENGTH - 1);
        return new long[] {done - start, 0, start};
    }
}
