package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §3.6: sleep uses the Io's clock; a cancelled sleeper wakes at once; zero and negative
 * durations return at once; huge durations never overflow.
 */
public abstract class SleepContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected SleepContract() {}

    @Test
    void sleepWaitsAtLeastTheDurationOnTheIosClock() {
        long slept = inIo(() -> Io.async(() -> {
                    long start = Io.current().nowMs();
                    Io.sleep(Duration.ofMillis(40));
                    return Io.current().nowMs() - start;
                })
                .await());
        assertTrue(slept >= 40, "slept only " + slept + " ms");
    }

    @Test
    void sleepFromAPlainThreadWaitsToo() {
        long start = io.nowMs();
        runInIo(() -> Io.sleep(Duration.ofMillis(20)));
        assertTrue(io.nowMs() - start >= 20);
    }

    @Test
    void zeroAndNegativeDurationsReturnAtOnceWithoutASuspendPoint() {
        List<String> log = new CopyOnWriteArrayList<>();
        Future<String> f = inIo(() -> Io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            Io.sleep(Duration.ZERO);
            log.add("zero");
            Io.sleep(Duration.ofMillis(-5));
            log.add("negative");
            Io.sleep(Duration.ofSeconds(Long.MIN_VALUE));
            log.add("most negative");
            return "done";
        }));
        awaitDone(f);
        assertEquals(List.of("zero", "negative", "most negative"), log);
    }

    /**
     * On a real clock a sleep never ends early in real time either. The Io's reading is truncated
     * to a whole millisecond, so a deadline of {@code nowMs() + 1} read at 4.9 ms is reached 0.1 ms
     * later: a timer that fired when the reading reached its deadline ended a 1 ms sleep after
     * as little as that (almost every time, over 50 sleeps). Measured with System.nanoTime: the
     * Io's own clock cannot see it.
     */
    @Test
    void aSleepNeverEndsEarlyInRealTime() {
        assumeFalse(hasVirtualClock(), "a virtual clock's time is whole: nothing to truncate");
        List<Long> earlySleeps = inIo(() -> Io.async(() -> {
                    List<Long> early = new ArrayList<>();
                    for (int i = 0; i < 50; i++) {
                        long start = System.nanoTime();
                        Io.sleep(Duration.ofMillis(1));
                        long slept = System.nanoTime() - start;
                        if (slept < 1_000_000) {
                            early.add(slept);
                        }
                    }
                    return early;
                })
                .await());
        assertEquals(List.of(), earlySleeps, "1 ms sleeps that ended early (ns)");
    }

    @Test
    void subMillisecondDurationsRoundUpSoASleepNeverEndsEarly() {
        long slept = inIo(() -> Io.async(() -> {
                    long start = Io.current().nowMs();
                    Io.sleep(Duration.ofNanos(1));
                    return Io.current().nowMs() - start;
                })
                .await());
        assertTrue(slept >= 1, "a 1 ns sleep returned after " + slept + " ms");
    }

    @Test
    void aHugeSleepDoesNotOverflowAndParksUntilCancelled() {
        for (Duration huge : List.of(
                Duration.ofSeconds(Long.MAX_VALUE, 999_999_999),
                Duration.ofMillis(Long.MAX_VALUE),
                ChronoUnit.FOREVER.getDuration().plusDays(-1))) {
            AtomicReference<Throwable> seen = new AtomicReference<>();
            Started<String> sleeper = startElsewhere(() -> {
                try {
                    Io.sleep(huge);
                    return "woke up";
                } catch (Throwable t) {
                    seen.set(t);
                    throw t;
                }
            });
            sleeper.awaitParked();
            assertEquals(Future.State.PENDING, sleeper.future().state(), huge + " returned early");
            sleeper.future().cancel();
            awaitDone(sleeper.future());
            assertTrue(seen.get() instanceof Cancelled, huge + ": sleep threw " + seen.get());
        }
    }

    @Test
    void aHugeFiniteSleepOnAVirtualClockEndsExactlyAtItsDeadline() {
        assumeTrue(hasVirtualClock(), "on a real clock it would take that long");
        Duration huge = Duration.ofMillis(Long.MAX_VALUE / 4); // about 73 million years: finite, far from saturating
        long[] times = inIo(() -> Io.async(() -> {
                    long start = Io.current().nowMs();
                    Io.sleep(huge);
                    long woke = Io.current().nowMs();
                    Io.sleep(Duration.ofMillis(5)); // and the clock goes on working out there
                    return new long[] {start, woke, Io.current().nowMs()};
                })
                .await());
        assertEquals(times[0] + huge.toMillis(), times[1], "woke at " + times[1] + " after starting at " + times[0]);
        assertEquals(times[1] + 5, times[2]);
    }

    @Test
    void aCancelledSleepLeavesNoTimerBehind() {
        assumeFalse(
                runsTasksInline() && hasVirtualClock(),
                "an inline virtual clock jumps over a sleep nobody else waits behind");
        long[] deadlines; // [while it slept, after it was cancelled]
        if (runsTasksInline()) {
            Started<String> sleeper = startElsewhere(() -> {
                Io.sleep(Duration.ofHours(1));
                return "slept";
            });
            sleeper.awaitParked();
            long armed = io.poll(io.nowMs());
            sleeper.future().cancel();
            awaitDone(sleeper.future());
            deadlines = new long[] {armed, io.poll(io.nowMs())};
        } else {
            // Inside a task: a virtual clock does not jump to the hour while the test looks.
            deadlines = inIo(() -> Io.async(() -> {
                        Io current = Io.current();
                        Future<Void> sleeper = Io.async(() -> {
                            Io.sleep(Duration.ofHours(1));
                            return null;
                        });
                        long armed = current.poll(current.nowMs());
                        while (armed == Io.NO_DEADLINE) {
                            Io.yield(); // until the sleeper has armed its timer
                            armed = current.poll(current.nowMs());
                        }
                        sleeper.cancel();
                        assertThrows(Cancelled.class, sleeper::await);
                        return new long[] {armed, current.poll(current.nowMs())};
                    })
                    .await());
        }
        assertTrue(deadlines[0] != Io.NO_DEADLINE, "the sleep armed no timer");
        assertEquals(Io.NO_DEADLINE, deadlines[1], "the cancelled sleep left its timer armed");
    }

    @Test
    void aCancelledSleeperWakesAtOnce() {
        assumeFalse(hasVirtualClock(), "a virtual clock jumps over a sleep nobody else waits behind");
        long before = io.nowMs();
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Started<String> sleeper = startElsewhere(() -> {
            try {
                Io.sleep(Duration.ofHours(1));
                return "slept";
            } catch (Throwable t) {
                seen.set(t);
                throw t;
            }
        });
        sleeper.awaitParked();
        sleeper.future().cancel();
        awaitDone(sleeper.future());
        assertEquals(Future.State.CANCELLED, sleeper.future().state());
        assertInstanceOf(Cancelled.class, seen.get(), "the sleep ended by throwing Cancelled");
        long slept = io.nowMs() - before;
        assertTrue(slept < Duration.ofHours(1).toMillis(), "woke after " + slept + " ms: by its timer, not the cancel");
    }

    @Test
    void sleepInACancelledTaskThrowsAtOnce() {
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Future<Void> f = inIo(() -> Io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            try {
                Io.sleep(Duration.ofMillis(10));
            } catch (Throwable t) {
                seen.set(t);
            }
            return null;
        }));
        awaitDone(f);
        assertTrue(seen.get() instanceof Cancelled, "sleep threw " + seen.get());
    }

    @Test
    void concurrentSleepersWakeInDeadlineOrder() {
        List<Integer> order = new CopyOnWriteArrayList<>();
        AtomicLong slowDeadline = new AtomicLong();
        AtomicLong fastDeadline = new AtomicLong();
        inIo(() -> Io.async(() -> {
                    Future<?> slow = Io.async(() -> {
                        slowDeadline.set(Io.current().nowMs() + 60);
                        Io.sleep(Duration.ofMillis(60));
                        order.add(60);
                        return null;
                    });
                    Future<?> fast = Io.async(() -> {
                        fastDeadline.set(Io.current().nowMs() + 10);
                        Io.sleep(Duration.ofMillis(10));
                        order.add(10);
                        return null;
                    });
                    slow.await();
                    fast.await();
                    return null;
                })
                .await());
        if (runsTasksInline()) {
            assertEquals(List.of(60, 10), order, "inline, each sleeper runs to its end in spawn order");
            return;
        }
        // Scheduled, both sleep at once. On a virtual clock both start at the same time; on a real
        // one the fast sleeper may start late, and the order is the order of the deadlines armed.
        long gap = slowDeadline.get() - fastDeadline.get();
        String deadlines = "deadlines: fast " + fastDeadline + ", slow " + slowDeadline;
        if (hasVirtualClock()) {
            assertEquals(50, gap, deadlines);
        }
        if (Math.abs(gap) > 2) { // a deadline read a millisecond before it was armed may tie
            assertEquals(gap > 0 ? List.of(10, 60) : List.of(60, 10), order, deadlines);
        } else {
            assertEquals(List.of(10, 60), order.stream().sorted().toList(), deadlines);
        }
    }
}
