package io.weft.benchmarks;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The cores' state at each JMH iteration: a benchmark that takes this as a parameter gets the
 * cache-line round trip between the two cores ({@link CoreToCore}) measured before each of its
 * iterations, outside the timed loop, and reported as the secondary result {@code
 * coreRoundTripNs}, one value per iteration next to the score. {@link Report} splits the
 * iterations by it. Not thread-safe: for single-threaded benchmarks.
 *
 * {@snippet lang=java :
 * @Benchmark
 * public long spawnManyLocal(CoreState cores) { ... } // cores is not used by the body
 * }
 *
 * <p>Why: on the 2-vCPU VM the benchmarks ran on, the host moved the vCPUs between a placement
 * with a round trip of about 70 ns and one of about 330 ns, every few seconds to minutes, and
 * workloads whose tasks cross between workers ran up to several times slower in the second. A
 * reading before and after the whole run ({@code benchmarks/run.sh}) cannot say which iterations
 * ran in which; a reading at each iteration's start can (the state held for many seconds at a
 * time, longer than an iteration, in every probe run so far).
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class CoreState {
    /*
     * Implementation notes.
     *
     * The reading is the least of three probes of 30,000 round trips (2 ms in the fast state,
     * 10 ms in the slow one, each): a worker or carrier still spinning from the last operation,
     * or any other thread, can delay one probe, and only a faster placement can shorten one. The
     * trial's setup runs a probe first so that JIT compiles the hand-off loop before the first
     * reading counts. A probe stops after 100 ms (it reads NaN then; the iteration counts in
     * neither state): on a machine busy enough to deschedule one of its threads at every hand-off,
     * 30,000 of them could otherwise take minutes.
     */

    /**
     * A round trip no longer than this (ns) is the fast placement. On the test VM the readings
     * clustered at about 70 and 330 ns; a few fell between (110-180 ns, with a profiler attached).
     */
    static final double FAST_MAX_NANOS = 110;

    /** A round trip at least this long (ns) is the slow placement; between the two, neither. */
    static final double SLOW_MIN_NANOS = 250;

    private static final int PROBES = 3;
    private static final long ROUND_TRIPS_PER_PROBE = 30_000;
    /** Ten times a probe's length in the slow state: a probe that takes longer reads NaN. */
    private static final long PROBE_TIMEOUT_NANOS = 100_000_000;

    /** Whether there are two processors to measure between (on one, the probe would only take turns). */
    private static final boolean MEASURABLE = Runtime.getRuntime().availableProcessors() >= 2;

    /** The last reading (ns), NaN on one processor; see {@link #coreRoundTripNs()}. */
    private double reading = Double.NaN;

    /** Compiles the probe's loop. */
    @Setup(Level.Trial)
    public void warmUp() throws InterruptedException {
        if (MEASURABLE) {
            CoreToCore.roundTripNanos(10 * ROUND_TRIPS_PER_PROBE, 10 * PROBE_TIMEOUT_NANOS);
        }
    }

    /** Reads the round trip for the iteration about to start. */
    @Setup(Level.Iteration)
    public void read() throws InterruptedException {
        if (!MEASURABLE) {
            return;
        }
        double least = Double.NaN;
        for (int i = 0; i < PROBES; i++) {
            double probe = CoreToCore.roundTripNanos(ROUND_TRIPS_PER_PROBE, PROBE_TIMEOUT_NANOS);
            least = Double.isNaN(least) || probe < least ? probe : least; // NaN: that probe ran out of time
        }
        reading = least;
    }

    /**
     * Returns the cache-line round trip (ns) measured just before this iteration started. A
     * method, not a public field: JMH zeroes an aux counter's public fields after the iteration's
     * setup (they count events during it), but reads its methods as they are.
     *
     * @return the reading, in ns; NaN on a machine with one processor, or if every probe ran out of time
     */
    public double coreRoundTripNs() {
        return reading;
    }
}
