package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/** ParkClock's tick only moves forward, and a park reads it only while a keeper is registered. */
class ParkClockTickTest {
    private static final long UNIT = ParkClock.KEEPER_PERIOD_NANOS;

    @Test
    void aKeeperThatReadTheClockBeforeAnotherOnesNewerTickDoesNotMoveItBack() {
        int before = ParkClock.keepers();
        // ahead of any tick a real clock read in this JVM has written (ticks only move forward)
        long base = System.nanoTime() + 1_000 * UNIT;
        ParkClock.keep(base);
        try {
            ParkClock.tick(base + 5 * UNIT); // one keeper's look
            ParkClock.tick(base + UNIT); // another's, which read the clock before that look: late
            assertEquals((int) ((base + 5 * UNIT) >>> ParkClock.SHIFT), ParkClock.now());
        } finally {
            ParkClock.release();
        }
        assertEquals(before, ParkClock.keepers());
    }

    /**
     * A tick 2^31 units (about 26 days) or more away from the clock reads as ahead of it: the tick
     * left by a keeper that ended weeks ago, or the initial 0 on a machine whose clock's unit is
     * negative as an int. The first keeper used to leave such a tick as it was.
     */
    @Test
    void theFirstKeeperWritesTheTickHoweverFarOffItWas() {
        assumeTrue(ParkClock.keepers() == 0, "a keeper from elsewhere in this JVM: no first keeper here");
        long base = System.nanoTime() + 1_000 * UNIT; // ahead of any tick written in this JVM
        ParkClock.keep(base);
        ParkClock.release();
        long weeksLater = base + (1L << 31) * UNIT; // as an int, Integer.MIN_VALUE units on: "behind"
        ParkClock.keep(weeksLater);
        try {
            assertEquals((int) (weeksLater >>> ParkClock.SHIFT), ParkClock.now());
        } finally {
            ParkClock.release();
        }
    }

    @Test
    void withNoKeeperAParkReadsTheClock() {
        int before = ParkClock.keepers();
        if (before != 0) {
            return; // a keeper from elsewhere in this JVM: the clock path is not reachable here
        }
        // the tick is stale or (after the other test) far ahead: either way not the clock
        int exact = ParkClock.exact();
        int now = ParkClock.now();
        assertEquals(true, now - exact >= 0 && now - exact <= 1, "now " + now + " is the clock's " + exact);
    }
}
