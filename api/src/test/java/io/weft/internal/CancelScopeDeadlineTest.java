package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.weft.ParkToken;
import io.weft.TimedOut;
import io.weft.TimerHandle;
import org.junit.jupiter.api.Test;

/**
 * When a cancel scope's deadline has passed, on DeferredIo's manual clock (the scopes here are
 * the test thread's own, as a plain-thread owner's).
 */
class CancelScopeDeadlineTest {
    private final TimedOut timedOut = new TimedOut("the deadline passed (test)");

    /** A DeferredIo whose timers are due once the reading has passed their deadline, as a real clock's. */
    private static DeferredIo realClockLike() {
        return new DeferredIo() {
            @Override
            public TimerHandle armTimer(long deadlineMs, ParkToken park) {
                return super.armTimer(deadlineMs == NO_DEADLINE ? NO_DEADLINE : deadlineMs + 1, park);
            }
        };
    }

    /**
     * The deadline used to count as passed once the reading reached it. A real clock's reading
     * is truncated: it reaches a deadline up to a millisecond before the scope has lasted its
     * timeout. Now it has passed when its timer fired, or when the reading has passed it.
     */
    @Test
    void aReadingThatOnlyReachesTheDeadlineHasNotPassedIt() {
        DeferredIo io = realClockLike();
        CancelScope scope = CancelScope.open(io, 5, timedOut);
        try {
            io.advance(5);
            assertNull(scope.cause(), "the reading is at the deadline, its timer not due yet");
            io.advance(1);
            assertSame(timedOut, scope.cause());
        } finally {
            scope.end();
        }
    }

    /** No timer fires while a CPU-bound owner holds its worker: a reading past the deadline still counts. */
    @Test
    void aReadingPastTheDeadlineCountsWhenNoTimerFired() {
        DeferredIo timersNeverFire = new DeferredIo() {
            @Override
            public TimerHandle armTimer(long deadlineMs, ParkToken park) {
                return super.armTimer(NO_DEADLINE, park);
            }
        };
        CancelScope scope = CancelScope.open(timersNeverFire, 5, timedOut);
        try {
            timersNeverFire.advance(5);
            assertNull(scope.cause());
            timersNeverFire.advance(1);
            assertSame(timedOut, scope.cause());
        } finally {
            scope.end();
        }
    }

    /** A virtual clock stops at the deadline, where its timer fires: that is enough. */
    @Test
    void aTimerThatFiredAtTheDeadlineCounts() {
        DeferredIo io = new DeferredIo(); // timers due when the reading reaches them
        CancelScope scope = CancelScope.open(io, 5, timedOut);
        try {
            io.advance(5);
            assertSame(timedOut, scope.cause());
        } finally {
            scope.end();
        }
    }

    /**
     * A cancel that came after the deadline had passed, before anyone looked at the scope (a
     * child that failed as the deadline stopped it, while its owner computed), used to install
     * its own cause: the owner then saw that failure instead of TimedOut.
     */
    @Test
    void aCancelAfterTheDeadlinePassedKeepsTheDeadlinesCause() {
        DeferredIo io = new DeferredIo();
        CancelScope scope = CancelScope.open(io, 5, timedOut);
        try {
            io.advance(5); // the timer fires; nobody looks
            assertFalse(scope.cancel(new IllegalStateException("a child failed")));
            assertSame(timedOut, scope.cause());
        } finally {
            scope.end();
        }
    }
}
