package io.weft.internal;

import io.weft.Io;
import java.time.Duration;

/** Converting {@link Duration}s to deadlines on an Io's millisecond clock, saturating. */
final class Durations {
    private Durations() {}

    /**
     * Returns {@code nowMs + duration}, rounded up to a whole millisecond so a wait never ends
     * early, saturating at {@link Io#NO_DEADLINE} (a deadline that never comes).
     */
    static long deadline(long nowMs, Duration duration) {
        if (duration.isNegative() || duration.isZero()) {
            return nowMs;
        }
        long ms = ceilMillis(duration);
        boolean saturates = nowMs >= 0 && ms >= Io.NO_DEADLINE - nowMs; // a negative now cannot overflow
        return saturates ? Io.NO_DEADLINE : nowMs + ms;
    }

    private static long ceilMillis(Duration d) {
        long seconds = d.getSeconds();
        int nanos = d.getNano();
        if (seconds >= Long.MAX_VALUE / 1000 - 1) {
            return Long.MAX_VALUE;
        }
        return seconds * 1000 + (nanos + 999_999) / 1_000_000;
    }
}
