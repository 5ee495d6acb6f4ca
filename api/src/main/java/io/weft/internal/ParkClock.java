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
     * "parked for"). A ping_pong round trip is two parks of about 290 ns each: the two reads were
     * 8-10% of it (JMH, TokioSuite.pingPong, fiber: 635 and 576 us/op with the reads, 587 and 512
     * without, two runs of 2 forks each, alternating).
     *
     * The stamp's unit is already 2^20 ns, so a tick refreshed at least once per unit is as good
     * as a clock read: a stamp from it is at most about one unit old (plus however late the
     * keeper's thread was woken), and a wait's age reads at most that much long.
     *
     * Keepers: a FiberIo's stall watch looks every half threshold, 1 ms by default; a watch whose
     * period is at most one unit registers as a keeper (keep, then tick on every look, release
     * when it ends). With no keeper (no FiberIo, only ones with the watch off or a longer
     * threshold, a virtual clock: no watch) a park reads the clock, as before. keep() writes the
     * tick before it counts itself, so a reader that sees a keeper sees a tick at least that
     * recent. The tick is one int, written about once a millisecond by each keeper (only when it
     * changed) and read by every park: the line stays shared, a read is a plain load on x86.
     *
     * Per park: two volatile reads (the keeper count and the tick), no clock read, no write.
     */

    /** Bits of nanoTime dropped: one unit is 2^20 ns, about 1.05 ms. */
    public static final int SHIFT = 20;
    /** The longest a keeper may wait between ticks, in nanoseconds: one unit. */
    public static final long KEEPER_PERIOD_NANOS = 1L << SHIFT;

    private static final AtomicInteger KEEPERS = new AtomicInteger();
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
     * {@code nanoTime} at least every {@link #KEEPER_PERIOD_NANOS}, until it calls {@link #release}.
     *
     * @param nanoTime {@link System#nanoTime()}, read just now
     */
    public static void keep(long nanoTime) {
        tick(nanoTime);
        KEEPERS.incrementAndGet();
    }

    /**
     * Refreshes the shared tick; called by a keeper on every look.
     *
     * @param nanoTime {@link System#nanoTime()}, read just now
     */
    public static void tick(long nanoTime) {
        int now = (int) (nanoTime >>> SHIFT);
        if (tick != now) {
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
