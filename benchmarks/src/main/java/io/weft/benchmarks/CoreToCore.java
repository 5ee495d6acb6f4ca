package io.weft.benchmarks;

import java.time.LocalTime;

/**
 * What a cache line costs to move between two cores right now: a command-line tool, and the
 * probe {@link CoreState} takes between JMH iterations. Two platform threads hand a counter back
 * and forth (each spins until the other has moved it); the tool prints the mean round trip of
 * each of {@code runs} runs of 1,000,000 round trips, with the time of day, after one unprinted
 * run that warms up the JIT. Not thread-safe: one probe at a time per JVM.
 *
 * {@snippet lang=sh :
 * java -cp benchmarks/target/benchmarks.jar io.weft.benchmarks.CoreToCore [runs]
 * }
 *
 * <p>Why it exists: on the 2-vCPU VM the benchmarks ran on, this round trip was about 70 ns for a
 * while and about 330 ns for a while (the host moves the two vCPUs between cores that share a
 * cache and cores that do not; the guest cannot see or choose it), switching every few seconds to
 * minutes. Every workload that moves tasks between workers slows down in the second state, so
 * the iterations of one benchmark, even within one fork, land in two clusters. Run this next to a
 * benchmark to tell which state a run was in before reading a slow one as a regression. On a
 * machine with one processor the two threads would take turns by time slice, so the probe says
 * so and measures nothing.
 */
public final class CoreToCore {
    private static final long ROUND_TRIPS = 1_000_000;

    /** The counter both threads move; volatile, so every hand-off crosses between the two cores. */
    private static volatile long ball;
    /**
     * Set by whichever side of a probe ran out of time, read by both while they wait (then both
     * stop); cleared by the caller before the next probe starts its other thread.
     */
    private static volatile boolean abandoned;
    /** When side 0 saw the first round trip complete; written and read by side 0 only. */
    private static long timedFrom;

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
        roundTripNanos(ROUND_TRIPS, Long.MAX_VALUE); // warm-up: the first run would include compiling tryBounce
        for (int run = 0; run < runs; run++) {
            System.out.printf(
                    "%s round trip %.0f ns%n",
                    LocalTime.now().withNano(0), roundTripNanos(ROUND_TRIPS, Long.MAX_VALUE));
        }
    }

    /**
     * Times {@code roundTrips} round trips (at least 3) between this thread and a new one; returns
     * the mean, in ns, or NaN if either side was still waiting for the other {@code timeoutNanos}
     * after the call began (both then stop: a busy machine that keeps descheduling one of them must
     * not hold the caller for long). The clock starts at the end of the first round trip, so the
     * other thread's start is not in it. Not for concurrent callers (they would share the counter).
     */
    static double roundTripNanos(long roundTrips, long timeoutNanos) throws InterruptedException {
        if (roundTrips < 3) {
            throw new IllegalArgumentException("at least 3 round trips: the first is not timed (" + roundTrips + ")");
        }
        ball = 0;
        abandoned = false;
        long deadline = System.nanoTime() + timeoutNanos;
        Thread other = Thread.ofPlatform().start(() -> tryBounce(1, roundTrips, deadline));
        boolean done = tryBounce(0, roundTrips, deadline);
        long elapsed = System.nanoTime() - timedFrom;
        other.join();
        // Timed: from seeing 2 to seeing 2 * roundTrips - 2 (then one plain write), roundTrips - 2 round trips
        return done ? elapsed / (double) (roundTrips - 2) : Double.NaN;
    }

    /**
     * Moves the counter on from each value of this side's parity (0: this thread, 1: the other),
     * {@code roundTrips} times: from 0 to 1 here, 1 to 2 there, 2 to 3 here, and so on. Returns
     * false, and makes the other side give up too, if it is still waiting at {@code deadline}.
     */
    private static boolean tryBounce(long parity, long roundTrips, long deadline) {
        for (long value = parity; value < 2 * roundTrips; value += 2) {
            int spins = 0;
            while (ball != value) {
                if ((++spins & 1023) == 0 && (abandoned || System.nanoTime() - deadline > 0)) {
                    abandoned = true;
                    return false;
                }
                Thread.onSpinWait();
            }
            if (value == 2) {
                timedFrom = System.nanoTime(); // side 0: the first round trip is complete
            }
            ball = value + 1;
        }
        return true;
    }
}
