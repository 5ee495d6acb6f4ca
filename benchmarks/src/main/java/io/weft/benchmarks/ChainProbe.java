package io.weft.benchmarks;

import io.weft.fiber.FiberIo;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;

/**
 * A quick probe of the per-task path, outside JMH: chains of 100,000 tasks, each spawning the next
 * and ending, timed from the first spawn to the last task's completion; prints nanoseconds per
 * link, the best and the mean of 20 chains per round, for the last rounds. With one worker nothing
 * steals or migrates, so the best-of-20 figure is steady to about 1% on a quiet core: a fast check
 * of a change to the spawn/run/end path before a JMH run (which is what decides).
 *
 * <pre>
 * java --add-opens java.base/java.lang=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar \
 *     io.weft.benchmarks.ChainProbe [fiber|fjp] [workers]
 * </pre>
 *
 * {@code fjp} runs the same chain on a ForkJoinPool of that parallelism ({@code execute} from the
 * pool's own worker: a local push), for comparison. The links are TokioSuite's chained_spawn links.
 */
public final class ChainProbe {
    private static final int LINKS = 100_000;
    private static final int CHAINS_PER_ROUND = 20;
    private static final int ROUNDS = 25;
    private static final int REPORTED_ROUNDS = 5;

    private ChainProbe() {}

    /**
     * Runs the probe.
     *
     * @param args the runtime ({@code fiber}, the default, or {@code fjp}) and the worker count (default 1)
     * @throws InterruptedException if interrupted while closing the runtime
     */
    public static void main(String[] args) throws InterruptedException {
        String runtime = args.length > 0 ? args[0] : "fiber";
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        switch (runtime) {
            case "fiber" -> {
                try (FiberIo io = FiberIo.builder().workers(workers).build()) {
                    rounds(runtime, workers, done -> io.spawn(() -> TokioSuite.fiberLink(LINKS, done)));
                }
            }
            case "fjp" -> {
                ForkJoinPool pool = new ForkJoinPool(workers);
                rounds(runtime, workers, done -> TokioSuite.executorChain(pool, LINKS, done));
                pool.shutdown();
            }
            default -> throw new IllegalArgumentException("runtime must be fiber or fjp, not " + runtime);
        }
    }

    private interface Start {
        void chain(CompletableFuture<Integer> done);
    }

    private static void rounds(String runtime, int workers, Start start) {
        for (int round = 0; round < ROUNDS; round++) {
            long best = Long.MAX_VALUE;
            long total = 0;
            for (int i = 0; i < CHAINS_PER_ROUND; i++) {
                CompletableFuture<Integer> done = new CompletableFuture<>();
                long began = System.nanoTime();
                start.chain(done);
                done.join(); // completed by the last link only
                long took = System.nanoTime() - began;
                best = Math.min(best, took);
                total += took;
            }
            if (round >= ROUNDS - REPORTED_ROUNDS) {
                System.out.printf(
                        "%s, %d worker(s): ns per link best %.1f, mean %.1f%n",
                        runtime, workers, best / (double) LINKS, total / (double) CHAINS_PER_ROUND / LINKS);
            }
        }
    }
}
