package io.weft.combinators.internal;

import io.weft.Io;
import java.time.Duration;

/**
 * The combinators' one conversion of a timeout to a deadline on an Io's millisecond clock (the
 * channels, scopes and processes), with the rules of the api's own (io.weft.internal.Durations): a wait never ends early, and a timeout too long for the clock is no
 * deadline at all. Not exported.
 */
public final class Deadlines {
    /*
     * Implementation notes.
     *
     * Rounded up: a timeout of 1.5 ms waits until the clock reads 2 ms later, never 1 (a scope of
     * half a millisecond is not over at once). Saturated to Io.NO_DEADLINE, not one below it: a
     * deadline at the end of the clock's range is one a virtual clock can jump to when nothing
     * else is pending, after which every later deadline saturates there too and never comes;
     * NO_DEADLINE arms no timer. The same rules as the api's own timeouts (Io.sleep, await).
     */

    private Deadlines() {}

    /**
     * Returns {@code nowMs + timeout}, rounded up to a whole millisecond; {@code nowMs} for a zero
     * or negative timeout; {@link Io#NO_DEADLINE} when the sum is beyond the clock's range.
     *
     * @param nowMs the Io's clock now
     * @param timeout how long from now
     * @return the deadline on the same clock
     */
    public static long after(long nowMs, Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            return nowMs;
        }
        long seconds = timeout.getSeconds();
        if (seconds >= Long.MAX_VALUE / 1_000 - 1) {
            return Io.NO_DEADLINE;
        }
        long millis = seconds * 1_000 + (timeout.getNano() + 999_999) / 1_000_000;
        return nowMs >= 0 && millis >= Io.NO_DEADLINE - nowMs ? Io.NO_DEADLINE : nowMs + millis;
    }
}
