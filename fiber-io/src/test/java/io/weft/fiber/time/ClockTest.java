package io.weft.fiber.time;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Io;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ClockTest {

    @Test
    void realClockStartsAtZeroAndIsNotVirtual() {
        long before = System.nanoTime();
        Clock clock = Clock.real();
        long first = clock.nowMs();
        long elapsedMs = (System.nanoTime() - before) / 1_000_000L;

        assertTrue(first >= 0, "starts at 0, got " + first);
        assertTrue(first <= elapsedMs, "no more time than elapsed since creation: " + first + " > " + elapsedMs);
        assertFalse(clock.isVirtual());
    }

    @Test
    void realClockIsMonotonicAndAdvances() {
        Clock clock = Clock.real();
        long previous = clock.nowMs();
        for (int i = 0; i < 100_000; i++) {
            long now = clock.nowMs();
            assertTrue(now >= previous, "went back from " + previous + " to " + now);
            previous = now;
        }
        long start = clock.nowMs();
        await().atMost(Duration.ofSeconds(10)).until(() -> clock.nowMs() >= start + 2);
    }

    @Test
    void virtualClockStartsAtZero() {
        VirtualClock clock = Clock.virtual();

        assertEquals(0, clock.nowMs());
        assertTrue(clock.isVirtual());
    }

    @Test
    void virtualClockMovesOnlyWhenAdvancedAndOnlyForward() {
        VirtualClock clock = Clock.virtual();

        clock.advanceTo(10);
        assertEquals(10, clock.nowMs());
        clock.advanceTo(5);
        assertEquals(10, clock.nowMs(), "advanceTo an earlier time is ignored");
        clock.advanceTo(10);
        assertEquals(10, clock.nowMs());
        clock.advanceTo(-1);
        assertEquals(10, clock.nowMs());
        clock.advanceTo(Long.MAX_VALUE - 1);
        assertEquals(Long.MAX_VALUE - 1, clock.nowMs());
    }

    @Test
    void virtualClockRefusesToJumpToTheEndOfTime() {
        VirtualClock clock = Clock.virtual();
        clock.advanceTo(7);

        assertThrows(IllegalArgumentException.class, () -> clock.advanceTo(Io.NO_DEADLINE));
        assertEquals(7, clock.nowMs(), "a refused advance leaves the clock where it was");
    }

    @Test
    void concurrentAdvancesEndAtTheLargestTargetAndNeverGoBack() throws Exception {
        VirtualClock clock = Clock.virtual();
        int threads = 4;
        int advancesPerThread = 2_000_000;
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger wentBack = new AtomicInteger();
        AtomicLong max = new AtomicLong();
        List<Thread> advancers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t;
            advancers.add(Thread.ofPlatform().name("advancer-" + t).start(() -> {
                // Targets i * threads + offset + jitter: the threads keep overtaking each other, so
                // an advance that is not atomic (read, then write a smaller value) moves the clock
                // back. Many advances per thread so that the threads overlap on two cores.
                Random random = new Random(42 + offset);
                awaitUninterruptibly(start);
                long seen = 0;
                long largest = 0;
                for (int i = 0; i < advancesPerThread; i++) {
                    long target = (long) i * threads + offset + random.nextInt(2 * threads);
                    largest = Math.max(largest, target);
                    clock.advanceTo(target);
                    long now = clock.nowMs();
                    if (now < seen || now < target) {
                        wentBack.incrementAndGet();
                    }
                    seen = now;
                }
                max.accumulateAndGet(largest, Math::max);
            }));
        }
        start.countDown();
        for (Thread t : advancers) {
            t.join();
        }

        assertEquals(0, wentBack.get(), "reads that went back or fell short of the thread's own target");
        assertEquals(max.get(), clock.nowMs());
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
