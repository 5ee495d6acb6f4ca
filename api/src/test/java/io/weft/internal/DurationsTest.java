package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.weft.Io;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Durations.deadline: rounding up to whole milliseconds, saturating at Io.NO_DEADLINE. */
class DurationsTest {
    private static final long MAX = Long.MAX_VALUE;

    @Test
    void wholeMillisecondsAreAddedExactly() {
        assertEquals(105, Durations.deadline(100, Duration.ofMillis(5)));
        assertEquals(100 + 86_400_000, Durations.deadline(100, Duration.ofDays(1)));
    }

    @Test
    void subMillisecondPartsRoundUpSoAWaitNeverEndsEarly() {
        assertEquals(101, Durations.deadline(100, Duration.ofNanos(1)));
        assertEquals(101, Durations.deadline(100, Duration.ofNanos(999_999)));
        assertEquals(101, Durations.deadline(100, Duration.ofNanos(1_000_000)));
        assertEquals(102, Durations.deadline(100, Duration.ofNanos(1_000_001)));
        assertEquals(2_101, Durations.deadline(100, Duration.ofSeconds(2, 1)));
    }

    @Test
    void zeroOrNegativeDurationsAreDueNow() {
        assertEquals(42, Durations.deadline(42, Duration.ZERO));
        assertEquals(42, Durations.deadline(42, Duration.ofNanos(-1)));
        assertEquals(42, Durations.deadline(42, Duration.ofMillis(-5)));
        assertEquals(42, Durations.deadline(42, Duration.ofSeconds(Long.MIN_VALUE)));
    }

    @Test
    void hugeDurationsSaturateToNoDeadline() {
        assertEquals(Io.NO_DEADLINE, Durations.deadline(0, Duration.ofSeconds(MAX, 999_999_999)));
        assertEquals(Io.NO_DEADLINE, Durations.deadline(0, Duration.ofMillis(MAX)));
        assertEquals(Io.NO_DEADLINE, Durations.deadline(1_000, Duration.ofSeconds(MAX / 1000)));
        assertEquals(Io.NO_DEADLINE, Durations.deadline(1_000, Duration.ofMillis(MAX - 500)));
    }

    @Test
    void aNowNearTheEndOfTheClockSaturatesInsteadOfOverflowing() {
        assertEquals(MAX - 1, Durations.deadline(MAX - 10, Duration.ofMillis(9)));
        assertEquals(Io.NO_DEADLINE, Durations.deadline(MAX - 10, Duration.ofMillis(10)));
        assertEquals(Io.NO_DEADLINE, Durations.deadline(MAX - 10, Duration.ofNanos(9_000_001)));
        assertEquals(Io.NO_DEADLINE, Durations.deadline(MAX - 1, Duration.ofDays(365)));
        assertEquals(MAX - 1, Durations.deadline(MAX - 1, Duration.ZERO));
    }
}
