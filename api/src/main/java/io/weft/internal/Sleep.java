package io.weft.internal;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimerHandle;
import java.time.Duration;

/** {@link Io#sleep}: a timer that readies a token, and one suspend point. */
public final class Sleep {
    private Sleep() {}

    /** What a sleeping task waits for (its park blocker): its deadline on an Io's clock. */
    public record Until(long deadlineMs, Io clock) {
        @Override
        public String toString() {
            return "sleep until " + deadlineMs + " ms on " + clock;
        }
    }

    /** Suspends the current task on {@code io} until {@code duration} has passed on its clock. */
    public static void sleep(Io io, Duration duration) {
        if (duration.isNegative() || duration.isZero()) {
            return;
        }
        sleepUntil(io, Durations.deadline(io.nowMs(), duration));
    }

    /**
     * Suspends the current task on {@code io} until a timer at {@code deadlineMs} fires: on a
     * real clock once the reading has passed it (a whole millisecond after a reading that only
     * reached it), on a virtual one when the clock reaches it. A suspend point even when the
     * deadline has passed.
     */
    public static void sleepUntil(Io io, long deadlineMs) {
        ParkToken token = ParkToken.create(new Until(deadlineMs, io));
        TimerHandle timer = io.armTimer(deadlineMs, token);
        try {
            io.suspendRaw(token);
        } finally {
            timer.cancel();
        }
    }
}
