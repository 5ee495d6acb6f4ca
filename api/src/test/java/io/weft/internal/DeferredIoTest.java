package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimerHandle;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The test double itself: tasks wait to be run, time waits to be advanced. */
class DeferredIoTest {

    @Test
    void spawnedTasksRunOnlyWhenTheTestRunsThemInSpawnOrder() {
        DeferredIo io = new DeferredIo();
        List<String> ran = new ArrayList<>();
        Task<String> first = io.async(() -> {
            ran.add("first");
            return "1";
        });
        Task<String> second = io.async(() -> {
            ran.add("second");
            return "2";
        });

        assertEquals(2, io.queued());
        assertEquals(List.of(), ran);
        assertTrue(io.runNext());
        assertEquals(List.of("first"), ran);
        assertTrue(first.isDone());
        assertFalse(second.isDone());
        assertEquals(1, io.runAll());
        assertEquals(List.of("first", "second"), ran);
        assertFalse(io.runNext());
    }

    @Test
    void advanceFiresExactlyTheTimersThatBecameDue() {
        DeferredIo io = new DeferredIo();
        ParkToken at10 = ParkToken.create();
        ParkToken at20 = ParkToken.create();
        io.armTimer(10, at10);
        io.armTimer(20, at20);

        io.advance(9);
        assertFalse(at10.isReady());
        io.advance(1);
        assertTrue(at10.isReady());
        assertFalse(at20.isReady());
        assertEquals(1, io.armedTimers());
        assertEquals(10, io.nowMs());
    }

    @Test
    void aCancelledTimerNeverFiresAndOnlyTheFirstCancelStopsIt() {
        DeferredIo io = new DeferredIo();
        ParkToken park = ParkToken.create();
        TimerHandle timer = io.armTimer(5, park);

        assertTrue(timer.cancel());
        assertFalse(timer.cancel());
        io.advance(100);
        assertFalse(park.isReady());
        assertEquals(0, io.armedTimers());
    }

    @Test
    void cancellingAFiredTimerReportsThatItDidNotStopIt() {
        DeferredIo io = new DeferredIo();
        ParkToken park = ParkToken.create();
        TimerHandle timer = io.armTimer(5, park);
        io.advance(5);

        assertTrue(park.isReady());
        assertFalse(timer.cancel());
    }

    @Test
    void aTimerArmedInThePastFiresAtOnceAndOneAtNoDeadlineNever() {
        DeferredIo io = new DeferredIo();
        io.advance(50);
        ParkToken past = ParkToken.create();
        ParkToken never = ParkToken.create();

        io.armTimer(10, past);
        io.armTimer(Io.NO_DEADLINE, never);
        io.advance(Long.MAX_VALUE / 2);

        assertTrue(past.isReady());
        assertFalse(never.isReady());
    }

    @Test
    void pollRunsQueuedTasksAndReturnsTheNextDeadline() {
        DeferredIo io = new DeferredIo();
        Task<String> task = io.async(() -> "ran");
        io.armTimer(30, ParkToken.create());
        io.armTimer(7, ParkToken.create());

        assertEquals(7, io.poll(1_000));
        assertTrue(task.isDone());
        assertEquals(Io.NO_DEADLINE, new DeferredIo().poll(0));
    }

    @Test
    void theClockNeverGoesBack() {
        assertThrows(IllegalArgumentException.class, () -> new DeferredIo().advance(-1));
    }
}
