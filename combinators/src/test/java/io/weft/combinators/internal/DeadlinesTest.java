package io.weft.combinators.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.weft.Io;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Test;

class DeadlinesTest {
    @Test
    void aTimeoutIsRoundedUpToAWholeMillisecond() {
        assertEquals(1_001, Deadlines.after(1_000, Duration.ofNanos(1)));
        assertEquals(1_001, Deadlines.after(1_000, Duration.ofNanos(500_000)), "half a millisecond is not none");
        assertEquals(1_002, Deadlines.after(1_000, Duration.ofMillis(1).plusNanos(1)));
        assertEquals(1_005, Deadlines.after(1_000, Duration.ofMillis(5)));
    }

    @Test
    void aZeroOrNegativeTimeoutIsNow() {
        assertEquals(7, Deadlines.after(7, Duration.ZERO));
        assertEquals(7, Deadlines.after(7, Duration.ofMillis(-5)));
        assertEquals(7, Deadlines.after(7, ChronoUnit.FOREVER.getDuration().negated()));
    }

    /** Not one millisecond short of it: a virtual clock could jump there (ChannelTimedReceiveTest). */
    @Test
    void aTimeoutBeyondTheClocksRangeIsNoDeadline() {
        assertEquals(Io.NO_DEADLINE, Deadlines.after(0, Duration.ofSeconds(Long.MAX_VALUE)));
        assertEquals(Io.NO_DEADLINE, Deadlines.after(5, Duration.ofMillis(Long.MAX_VALUE)));
        assertEquals(Io.NO_DEADLINE, Deadlines.after(5, ChronoUnit.FOREVER.getDuration()));
        assertEquals(Io.NO_DEADLINE, Deadlines.after(Io.NO_DEADLINE - 10, Duration.ofMillis(10)));
        assertEquals(Io.NO_DEADLINE - 1, Deadlines.after(Io.NO_DEADLINE - 11, Duration.ofMillis(10)));
    }
}
