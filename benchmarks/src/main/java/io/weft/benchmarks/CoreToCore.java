package io.weft.benchmarks;

import java.time.LocalTime;

/**
 * What a cache line costs to move between two cores right now; a command-line tool, not for use
 * from other code. Two platform threads hand a counter back and forth (each spins until the other
 * has moved it), and the probe prints the mean round trip of each of {@code runs} runs of
 * 1,000,000 round trips, with the time of day, after one unprinted run that warms up the JIT.
 *
 * {@snippet lang=sh :
 * java -cp benchmarks/target/benchmarks.jar io.weft.benchmarks.CoreToCore [runs]
 * }
 *
 * <p>Why it exists: on the 2-vCPU VM the benchmarks ran on, this round trip was about 70 ns for a
 * while and about 330 ns for a while (the host moves the two vCPUs between cores that share a
 * cache and cores that do not; the guest cannot see or choose it), switching every few seconds to
 * minutes. Every workload that moves tasks between workers slows down in the second state, so
 * JMH forks of one benchmark land in two clusters. Run this next to a benchmark to tell which
 * state a run was in before reading a slow fork as a regression. On a machine with one processor
 * the two threads would take turns by time slice, so the probe says so and measures nothing.
 */
public final class CoreToCore {
    private static final long ROUND_TRIPS = 1_000_000;

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
        if (Runtime.getRuntime().availableProcessors() < 2) {
            System.out.println(LocalTime.now().withNano(0) + " round trip n/a (one processor)");
            return;
        }
        roundTripNanos(); // warm-up: the first run would include compiling bounce
        for (int run = 0; run < runs; run++) {
            System.out.printf("%s round trip %.0f ns%n", LocalTime.now().withNano(0), roundTripNanos());
        }
    }

    /** Times ROUND_TRIPS round trips between this thread and a new one; returns the mean, in ns. */
    private static double roundTripNanos() throws InterruptedException {
        ball = 0;
        Thread other = Thread.ofPlatform().start(() -> bounce(1));
        long start = System.nanoTime();
        bounce(0);
        long elapsed = System.nanoTime() - start;
        other.join();
        return elapsed / (double) ROUND_TRIPS;
    }

    /**
     * Moves the counter on from each value of this side's parity (0: this thread, 1: the other),
     * ROUND_TRIPS times: from 0 to 1 here, 1 to 2 there, 2 to 3 here, and so on.
     */
    private static void bounce(long parity) {
        for (long value = parity; value < 2 * ROUND_TRIPS; value += 2) {
            while (ball != value) {
                Thread.onSpinWait();
            }
            ball = value + 1;
        }
    }
}
