package io.weft.benchmarks;

import java.time.LocalTime;

/**
 * What a cache line costs to move between the machine's cores right now: two platform threads
 * hand a counter back and forth (each spins until the other has moved it), and the probe prints
 * the mean round trip of each of {@code runs} runs of 1,000,000 hand-offs, with the time of day.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.weft.benchmarks.CoreToCore [runs]
 * </pre>
 *
 * <p>Why it exists: on the 2-vCPU VM the benchmarks ran on, this round trip is about 70 ns for a
 * while and about 330 ns for a while (the host moves the two vCPUs between cores that share a
 * cache and cores that do not; the guest cannot see or choose it), switching every few seconds to
 * minutes. Every workload that moves tasks between workers slows down in the second state, so
 * JMH forks of one benchmark land in two clusters. Run this next to a benchmark to tell which
 * state a run was in before reading a slow fork as a regression.
 */
public final class CoreToCore {
    private static final long HAND_OFFS = 1_000_000;

    /** The counter both threads move; volatile, so every hand-off crosses between the two cores. */
    private static volatile long ball;

    private CoreToCore() {}

    /**
     * Runs the probe.
     *
     * @param args the number of runs (default 10)
     * @throws InterruptedException if interrupted while waiting for the other thread
     */
    public static void main(String[] args) throws InterruptedException {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        for (int run = 0; run < runs; run++) {
            ball = 0;
            Thread other = Thread.ofPlatform().start(() -> bounce(1));
            long start = System.nanoTime();
            bounce(0);
            long elapsed = System.nanoTime() - start;
            other.join();
            System.out.printf("%s round trip %.0f ns%n", LocalTime.now().withNano(0), elapsed / (double) HAND_OFFS);
        }
    }

    /** Moves the counter from each value of this side's parity to the next, HAND_OFFS times. */
    private static void bounce(long parity) {
        for (long value = parity; value < 2 * HAND_OFFS; value += 2) {
            while (ball != value) {
                Thread.onSpinWait();
            }
            ball = value + 1;
        }
    }
}
