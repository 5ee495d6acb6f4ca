package io.weft.internal;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The clock a {@link io.weft.ParkToken} stamps the start of a wait with: {@link System#nanoTime()}
 * in units of 2^{@value #SHIFT} ns (about a millisecond), truncated to an int. While a runtime keeps
 * the shared tick fresh, a park reads the tick instead of the clock.
 */
public final class ParkClock {
    /*
     * Implementation notes.
     *
     * Why: a clock read costs about 25 ns on a virtual machine's clock source (kvm-clock through
     * the vDSO), and every park of a fiber stamps its token (ParkToken.since, for FiberDump's
     * "parked for"). A ping_pong round trip is two parks of about 290 ns each: JMH (fiber, jars
     * before and after alternating, 2 forks twice) put pingPong at 611 and 569 us/op with the
     * reads and 527 and 525 without; a 3-fork run on a quieter machine, 462 +- 20 and 445 +- 44
     * (BENCHMARKS.md, "2026-11-27: the park clock"): a few percent, inside the error.
     *
     * The stamp's unit is already 2^20 ns, so a tick refreshed about once per unit is nearly as
     * good as a clock read: a stamp from it is about one unit old at most, plus however late the
     * keeper's thread runs, and a wait's age reads long by that much. A keeper held up (a GC
     * pause, an overloaded machine that does not schedule its thread) makes every stamp taken
     * meanwhile read long by the delay: ages are diagnostics, and the same delay held up the
     * parked tasks' own progress.
     *
     * Scope: one tick for the whole JVM. While any keeper is registered, every park reads the
     * tick, whatever runtime it belongs to (BlockingIo, a FiberIo with a virtual clock or with its
     * watch off); with none, every park reads the clock.
     *
     * Keepers: a FiberIo's stall watch looks every half threshold, 1 ms by default; a watch whose
     * period is at most one unit registers as a keeper (keep, then tick on every look, release
     * when it ends, in a finally). keep() writes the tick before it counts itself, so a reader
     * that sees a keeper sees a tick at least that recent.
     *
     * The first keeper writes the tick whatever it held: "forward" is a wrap-safe int comparison,
     * which reads a value 2^31 units (about 26 days) or more away as behind. The tick starts at 0,
     * and nanoTime's unit as an int is negative for half of every 52 days of a JVM's clock (on
     * Linux, the machine's uptime); a tick last written by a keeper that ended weeks ago is just
     * as far off. Either way a first keeper's tick was never written, and every park stamped the
     * stale value (FiberDump's ages read wrong). Two first keepers at once both write: their
     * values are a race's width apart.
     *
     * Memory: `tick` is written by keepers (each about once per unit, only when the unit
     * changed, and only forward: a keeper that read the clock before another one's newer write
     * does not move it back by more than the width of that race) and read by every park;
     * KEEPERS is changed by keepers as they start and end and read by every park. Both lines stay
     * shared: a read is a plain load on x86.
     *
     * Per park: two volatile reads (the keeper count and the tick), no clock read, no write.
     */

    /** Bits of nanoTime dropped: one unit is 2^20 ns, about 1.05 ms. */
    public static final int SHIFT = 20;
    /** The longest a keeper may wait between ticks, in nanoseconds: one unit. */
    public static final long KEEPER_PERIOD_NANOS = 1L << SHIFT;

    /** How many keepers are registered: changed by keepers, read by every park. */
    private static final AtomicInteger KEEPERS = new AtomicInteger();
    /** Now, as of the latest keeper's look, in units; written by keepers, read by every park. */
    private static volatile int tick;

    private ParkClock() {}

    /** Returns now, in units of 2^{@value #SHIFT} ns of {@link System#nanoTime()}, truncated to an int. */
    public static int now() {
        return KEEPERS.get() > 0 ? tick : exact();
    }

    /** Returns now from the clock itself, in the same units as {@link #now()}. */
    public static int exact() {
        return (int) (System.nanoTime() >>> SHIFT);
    }

    /**
     * Registers the calling keeper, which from now on calls {@link #tick} with a fresh
     * {@code nanoTime} about every {@link #KEEPER_PERIOD_NANOS} (a wake-up may come a little
     * late), until it calls {@link #release}.
     *
     * @param nanoTime {@link System#nanoTime()}, read just now
     */
    public static void keep(long nanoTime) {
        if (KEEPERS.get() == 0) {
            tick = (int) (nanoTime >>> SHIFT); // whatever it was: see the notes, "The first keeper"
        } else {
            tick(nanoTime);
        }
        KEEPERS.incrementAndGet();
    }

    /**
     * Refreshes the shared tick; called by a keeper on every look.
     *
     * @param nanoTime {@link System#nanoTime()}, read just now
     */
    public static void tick(long nanoTime) {
        int now = (int) (nanoTime >>> SHIFT);
        if (now - tick > 0) { // forward only (wrap-safe): another keeper may have written a newer unit
            tick = now;
        }
    }

    /** Ends one {@link #keep}: this keeper ticks no more. */
    public static void release() {
        KEEPERS.decrementAndGet();
    }

    /**
     * Returns how many keepers there are now.
     *
     * @return the number of registered keepers
     */
    public static int keepers() {
        return KEEPERS.get();
    }
}
