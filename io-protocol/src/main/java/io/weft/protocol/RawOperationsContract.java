package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.TimerHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The contract of the six raw operations ({@code spawnRaw}, {@code suspendRaw}, {@code ready},
 * {@code poll}, {@code nowMs}, {@code armTimer}) and of {@link ParkToken}.
 */
public abstract class RawOperationsContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected RawOperationsContract() {}

    @Test
    void nowMsIsMonotonicAndNeverNegative() {
        long previous = io.nowMs();
        assertTrue(previous >= 0, "nowMs starts near zero, got " + previous);
        for (int i = 0; i < 1_000; i++) {
            long now = io.nowMs();
            assertTrue(now >= previous, "nowMs went back from " + previous + " to " + now);
            previous = now;
        }
    }

    @Test
    void spawnRawRunsTheTaskExactlyOnce() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        RawTask task = new CountingTask(runs);
        io.spawnRaw(task);
        eventually().until(() -> runs.get() > 0);
        closeIo(); // a second run, if any, happened before close returned: nothing runs after it
        assertEquals(1, runs.get());
    }

    @Test
    void readyBeforeParkMakesTheParkReturnAtOnce() {
        ParkToken park = ParkToken.create();
        io.ready(park);
        assertTrue(park.isReady());
        io.suspendRaw(park); // would hang (and time out) if the early ready were lost
        assertTrue(park.isReady());
    }

    @Test
    void readyIsIdempotent() {
        ParkToken park = ParkToken.create();
        io.ready(park);
        io.ready(park);
        io.suspendRaw(park);
        io.ready(park); // readying a token whose park has returned has no effect
        assertTrue(park.isReady());
        assertFalse(park.tryReady(), "a second signal reports that the token was already ready");
    }

    @Test
    void staleReadyNeverWakesALaterPark() {
        ParkToken first = ParkToken.create();
        io.ready(first);
        io.suspendRaw(first);

        ParkToken second = ParkToken.create();
        long deadline = io.nowMs() + 30;
        TimerHandle timer = io.armTimer(deadline, second);
        io.ready(first); // stale: must not wake the park on `second`
        io.suspendRaw(second);
        assertTrue(io.nowMs() >= deadline, "the park on a fresh token returned before its timer");
        assertFalse(timer.cancel(), "the timer had fired");
    }

    @Test
    void readyFromAnotherThreadWakesAParkedPlainThread() {
        ParkToken park = ParkToken.create();
        Thread parker = Thread.currentThread();
        helper("readier", () -> {
            awaitParked(parker);
            io.ready(park);
        });
        io.suspendRaw(park);
        assertTrue(park.isReady());
    }

    @Test
    void armTimerReadiesTheTokenAtItsDeadline() {
        ParkToken park = ParkToken.create();
        long deadline = io.nowMs() + 25;
        io.armTimer(deadline, park);
        io.suspendRaw(park);
        assertTrue(io.nowMs() >= deadline, "woke at " + io.nowMs() + ", before the deadline " + deadline);
    }

    @Test
    void armTimerWithAPastDeadlineFiresPromptly() {
        ParkToken park = ParkToken.create();
        io.armTimer(io.nowMs() - 1_000, park);
        io.suspendRaw(park);
        assertTrue(park.isReady());
    }

    @Test
    void aCancelledTimerNeverFires() {
        // Inside a task: a virtual clock does not advance while a task is running.
        inIo(() -> Io.async(() -> {
                    ParkToken cancelled = ParkToken.create();
                    long now = io.nowMs();
                    TimerHandle timer = io.armTimer(now + 10, cancelled);
                    assertTrue(timer.cancel(), "cancelling a pending timer stops it");
                    assertFalse(timer.cancel(), "cancel is idempotent");

                    ParkToken later = ParkToken.create();
                    io.armTimer(now + 40, later);
                    io.suspendRaw(later);
                    assertFalse(cancelled.isReady(), "a cancelled timer fired");
                    return null;
                })
                .await());
    }

    @Test
    void timersFireInDeadlineOrder() {
        // Inside a task: a virtual clock must not jump while the timers are still being armed.
        inIo(() -> Io.async(() -> {
                    long now = io.nowMs();
                    ParkToken late = ParkToken.create();
                    ParkToken early = ParkToken.create();
                    ParkToken middle = ParkToken.create();
                    io.armTimer(now + 90, late);
                    io.armTimer(now + 10, early);
                    io.armTimer(now + 50, middle);
                    for (ParkToken park : new ParkToken[] {early, middle, late}) {
                        io.suspendRaw(park);
                        // Read the latest first: if timers fire in order, a ready later one implies ready earlier ones.
                        boolean lateReady = late.isReady();
                        boolean middleReady = middle.isReady();
                        boolean earlyReady = early.isReady();
                        assertTrue(!lateReady || middleReady, "the latest timer fired before the middle one");
                        assertTrue(!middleReady || earlyReady, "the middle timer fired before the earliest");
                    }
                    assertTrue(io.nowMs() >= now + 90);
                    return null;
                })
                .await());
    }

    @Test
    void pollReportsTheNextDeadlineWithoutWaitingPastIt() {
        // Inside a task: a virtual clock does not advance while a task is running.
        inIo(() -> Io.async(() -> {
                    ParkToken park = ParkToken.create();
                    long deadline = io.nowMs() + 60_000;
                    TimerHandle timer = io.armTimer(deadline, park);
                    long next = io.poll(io.nowMs());
                    assertEquals(deadline, next, "poll reports the one pending deadline");
                    assertFalse(park.isReady(), "poll fired a timer that was not due");
                    assertTrue(timer.cancel());
                    return null;
                })
                .await());
    }

    @Test
    void pollFiresDueTimers() {
        ParkToken park = ParkToken.create();
        io.armTimer(io.nowMs() - 1, park);
        eventually().until(() -> {
            io.poll(io.nowMs());
            return park.isReady();
        });
    }

    @Test
    void pollWithNothingPendingReturnsNoDeadline() {
        assertEquals(Io.NO_DEADLINE, io.poll(io.nowMs()));
    }

    @Test
    void timerAtNoDeadlineNeverFires() {
        ParkToken never = ParkToken.create();
        TimerHandle timer = io.armTimer(Io.NO_DEADLINE, never);
        ParkToken soon = ParkToken.create();
        io.armTimer(io.nowMs() + 20, soon);
        io.suspendRaw(soon);
        assertFalse(never.isReady());
        assertTrue(timer.cancel());
    }

    @Test
    void suspendRawThrowsCancelledInACancelledTaskEvenIfTheTokenIsReady() {
        AtomicReference<String> seen = new AtomicReference<>();
        Future<Void> task = inIo(() -> Io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            ParkToken park = ParkToken.create();
            Io.current().ready(park);
            try {
                Io.current().suspendRaw(park);
                seen.set("returned");
            } catch (Cancelled c) {
                seen.set("cancelled");
            }
            return null;
        }));
        awaitDone(task);
        assertEquals("cancelled", seen.get());
        assertEquals(Future.State.CANCELLED, task.state());
    }

    @Test
    void aTokenIsParkedOnOnlyByTheThreadThatCreatedIt() {
        AtomicReference<ParkToken> foreign = new AtomicReference<>();
        Thread other = Thread.ofPlatform().unstarted(() -> foreign.set(ParkToken.create()));
        other.start();
        eventually().until(() -> foreign.get() != null);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> io.suspendRaw(foreign.get()));
        assertTrue(e.getMessage().contains("thread"), e.getMessage());
    }

    @Test
    void aParkedTaskIsWokenByReadyFromAnotherThread() {
        AtomicReference<ParkToken> token = new AtomicReference<>();
        Started<String> started = startElsewhere(() -> {
            ParkToken park = ParkToken.create();
            token.set(park);
            Io.current().suspendRaw(park);
            return "woken";
        });
        started.awaitParked();
        io.ready(token.get());
        assertEquals("woken", inIo(() -> started.future().await()));
    }

    @Test
    void spawnRawAcceptsTasksFromManyThreadsAndRunsEachOnce() throws InterruptedException {
        AtomicInteger runs = new AtomicInteger();
        Thread[] spawners = new Thread[4];
        for (int t = 0; t < spawners.length; t++) {
            spawners[t] = helper("spawner-" + t, () -> {
                for (int i = 0; i < 250; i++) {
                    io.spawnRaw(new CountingTask(runs));
                }
            });
        }
        for (Thread spawner : spawners) {
            spawner.join(PATIENCE.toMillis());
        }
        eventually().until(() -> runs.get() >= 1_000);
        assertEquals(1_000, runs.get());
    }

    /** A raw task that counts its runs. */
    private static final class CountingTask implements RawTask {
        private final AtomicInteger runs;
        private volatile boolean done;

        CountingTask(AtomicInteger runs) {
            this.runs = runs;
        }

        @Override
        public void run() {
            runs.incrementAndGet();
            done = true;
        }

        @Override
        public boolean cancel() {
            return !done;
        }

        @Override
        public boolean isDone() {
            return done;
        }
    }
}
