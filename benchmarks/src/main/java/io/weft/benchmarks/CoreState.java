package io.weft.benchmarks;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The cores' state at each JMH iteration, for single-threaded benchmarks (not thread-safe, and
 * the probe is one per JVM): a benchmark that takes this as a parameter gets the cache-line round
 * trip between the two cores ({@link CoreToCore}) measured before and after each of its
 * iterations, outside the timed loop, and reported as the secondary results {@code
 * coreRoundTripNs} and {@code coreRoundTripAfterNs}, one value each per iteration next to the
 * score. {@link Report} splits the iterations by them.
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
 * ran in which; readings at each iteration's ends can, for the iterations whose two readings agree
 * (the state usually held for seconds to minutes, longer than an iteration).
 */
@State(Scope.Thread)
@AuxCounters(AuxCounters.Type.EVENTS)
public class CoreState {
    /*
     * Implementation notes.
     *
     * A reading is the least of three probes of 30,000 round trips (2 ms in the fast state,
     * 10 ms in the slow one, each): a worker or carrier still spinning from the last operation,
     * or any other thread, can delay one probe, and only a faster placement can shorten one. One
     * reading before the iteration and one after it (the generated code collects both counters
     * after the iteration's teardown): the state can change during an iteration, and Report counts
     * an iteration in a state only when both readings agree. The trial's setup runs a probe first
     * so that JIT compiles the hand-off loop before the first reading counts. A probe stops after
     * 100 ms and is left out of the least (on a machine busy enough to deschedule one of its
     * threads at every hand-off, 30,000 of them could take minutes); if all three stop, the
     * reading is NaN, which Report counts in neither state.
     */

    /**
     * A round trip no longer than this (ns) is the fast placement. On the test VM the readings
     * clustered at about 70 and 330 ns, now and then 35 ns (counted fast); a few fell between
     * (110-180 ns, with a profiler attached).
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

    /** The readings (ns) before and after the iteration, NaN on one processor; see the getters. */
    private double before = Double.NaN;

    private double after = Double.NaN;

    /** Compiles the probe's loop. */
    @Setup(Level.Trial)
    public void warmUp() throws InterruptedException {
        if (MEASURABLE) {
            CoreToCore.roundTripNanos(10 * ROUND_TRIPS_PER_PROBE, 10 * PROBE_TIMEOUT_NANOS);
        }
    }

    /** Reads the round trip for the iteration about to start. */
    @Setup(Level.Iteration)
    public void readBefore() throws InterruptedException {
        before = read();
    }

    /** Reads the round trip for the iteration just ended. */
    @TearDown(Level.Iteration)
    public void readAfter() throws InterruptedException {
        after = read();
    }

    /**
     * Returns the cache-line round trip (ns) measured just before this iteration started. A
     * method, not a public field: JMH zeroes an aux counter's public fields after the iteration's
     * setup (they count events during it), but reads its methods as they are.
     *
     * @return the reading, in ns; NaN on a machine with one processor, or if every probe ran out of time
     */
    public double coreRoundTripNs() {
        return before;
    }

    /**
     * Returns the cache-line round trip (ns) measured just after this iteration ended.
     *
     * @return the reading, in ns; NaN as for {@link #coreRoundTripNs()}
     */
    public double coreRoundTripAfterNs() {
        return after;
    }

    /** The least of PROBES probes, leaving out those that ran out of time; NaN if all did, or on one processor. */
    private static double read() throws InterruptedException {
        double least = Double.NaN;
        if (MEASURABLE) {
            for (int i = 0; i < PROBES; i++) {
                double probe = CoreToCore.roundTripNanos(ROUND_TRIPS_PER_PROBE, PROBE_TIMEOUT_NANOS);
                least = Double.isNaN(least) || probe < least ? probe : least; // NaN: that probe ran out of time
            }
        }
        return least;
    }
}
