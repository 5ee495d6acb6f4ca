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
        long deadline = Durations.deadline(io.nowMs(), duration);
        ParkToken token = ParkToken.create(new Until(deadline, io));
        TimerHandle timer = io.armTimer(deadline, token);
        try {
            io.suspendRaw(token);
        } finally {
            timer.cancel();
        }
    }
}
