package io.weft.blocking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.SideThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The turns of a virtual-clock BlockingIo (issue 12, part 3): threads started beside the caller
 * through {@link SideThreads} run one at a time with the threads inside {@code Io.with(io)},
 * handing over only where one waits in the Io, so a program replays exactly.
 */
class TurnsTest {

    /** Records events with the virtual time, and whether two members ever ran at once. */
    private static final class Log {
        private final Io io;
        private final List<String> lines = new ArrayList<>();
        private final AtomicInteger running = new AtomicInteger();
        private final AtomicBoolean overlapped = new AtomicBoolean();

        Log(Io io) {
            this.io = io;
        }

        /** One step of a member: while it runs, nobody else may (a short spin widens the window). */
        void step(String event) {
            if (running.incrementAndGet() != 1) {
                overlapped.set(true);
            }
            synchronized (this) {
                lines.add(io.nowMs() + " " + event);
            }
            long until = System.nanoTime() + 20_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            running.decrementAndGet();
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }
    }

    private static Thread side(BlockingIo io, String name, Runnable body) {
        return SideThreads.startFor(io, name, () -> Io.with(io).run(body));
    }

    private static List<String> threeThreadsSleeping(BlockingIo io, Log log) throws InterruptedException {
        List<Thread> sides = new ArrayList<>();
        Io.with(io).run(() -> {
            for (int s = 0; s < 2; s++) {
                int me = s;
                sides.add(side(io, "side-" + s, () -> {
                    for (int i = 0; i < 5; i++) {
                        log.step("side " + me + " step " + i);
                        Io.sleep(Duration.ofMillis(2 + me));
                    }
                }));
            }
            for (int i = 0; i < 5; i++) {
                log.step("main step " + i);
                Io.sleep(Duration.ofMillis(3));
            }
        });
        for (Thread t : sides) {
            assertTrue(t.join(Duration.ofSeconds(10)), t + " did not end");
        }
        return log.lines();
    }

    @Test
    void sideThreadsTakeTurnsWithTheCallerAndReplayExactly() throws InterruptedException {
        Set<List<String>> traces = new LinkedHashSet<>();
        for (int run = 0; run < 20; run++) {
            BlockingIo io = BlockingIo.builder().virtualClock().build();
            Log log = new Log(io);
            traces.add(threeThreadsSleeping(io, log));
            assertFalse(log.overlapped.get(), "two members ran at once: " + log.lines());
        }
        assertEquals(1, traces.size(), () -> traces.size() + " distinct traces: " + traces);
        List<String> trace = traces.iterator().next();
        // the caller keeps the turn until it first waits; then the sides, in the order they were
        // started; each timer tie goes to the thread that began to wait first
        assertEquals(
                List.of(
                        "0 main step 0",
                        "0 side 0 step 0",
                        "0 side 1 step 0",
                        "2 side 0 step 1",
                        "3 main step 1",
                        "3 side 1 step 1",
                        "4 side 0 step 2"),
                trace.subList(0, 7));
        assertEquals(15, trace.size());
    }

    @Test
    void theClockDoesNotMoveWhileAMemberRuns() throws InterruptedException {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        AtomicReference<String> seen = new AtomicReference<>();
        Io.with(io).run(() -> {
            Thread sleeper = side(io, "sleeper", () -> Io.sleep(Duration.ofMillis(10)));
            Io.sleep(Duration.ofMillis(1)); // the sleeper starts and waits; the clock jumps to 1 only
            long before = io.nowMs();
            // a long stretch of work without waiting: the sleeper's timer (10 ms) must not fire meanwhile
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30);
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            seen.set(before + " " + io.nowMs() + " " + sleeper.isAlive());
        });
        assertEquals("1 1 true", seen.get());
    }

    @Test
    void aSideThreadStartedFromOutsideTheWorldRunsOnceTheStarterLeaves() throws InterruptedException {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        CountDownLatch done = new CountDownLatch(1);
        AtomicReference<Long> at = new AtomicReference<>();
        // as a subscriber on a plain thread does: only the producer's start is inside Io.with
        Io.with(io)
                .run(() -> side(io, "producer", () -> {
                    Io.sleep(Duration.ofMillis(5));
                    at.set(io.nowMs());
                    done.countDown();
                }));
        assertTrue(done.await(10, TimeUnit.SECONDS), io.toString());
        assertEquals(5L, at.get());
    }

    @Test
    void aMemberReadiedFromOutsideTheWorldRuns() throws InterruptedException {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        AtomicReference<ParkToken> parked = new AtomicReference<>();
        CountDownLatch woke = new CountDownLatch(1);
        Thread waiter = side(io, "waiter", () -> {
            ParkToken token = ParkToken.create();
            parked.set(token);
            io.suspendRaw(token);
            woke.countDown();
        });
        while (parked.get() == null || waiter.getState() != Thread.State.WAITING) {
            assertTrue(waiter.isAlive());
            Thread.onSpinWait(); // bounded by the test's timeout; no clock involved
        }
        assertFalse(woke.await(0, TimeUnit.MILLISECONDS));
        io.ready(parked.get()); // the test thread is not in the world
        assertTrue(woke.await(10, TimeUnit.SECONDS), io.toString());
        assertTrue(waiter.join(Duration.ofSeconds(10)));
    }

    @Test
    void aCancelledMemberGetsTheTurnWithoutWaitingOutItsTimer() throws InterruptedException {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        AtomicReference<Future<?>> sleeping = new AtomicReference<>();
        AtomicReference<String> outcome = new AtomicReference<>();
        AtomicReference<Thread> side = new AtomicReference<>();
        Io.with(io).run(() -> {
            side.set(side(
                    io,
                    "sleeper",
                    () -> Io.async(() -> {
                        sleeping.set(Io.currentTask().orElseThrow());
                        try {
                            Io.sleep(Duration.ofHours(1));
                            outcome.set("slept");
                        } catch (Cancelled expected) {
                            outcome.set("cancelled at " + io.nowMs());
                        }
                        return null;
                    })));
            Io.sleep(Duration.ofMillis(2)); // the sleeper starts its hour-long sleep
            assertNotNull(sleeping.get());
            sleeping.get().cancel();
            Io.sleep(Duration.ofMillis(3)); // the turn goes to the cancelled sleeper at once
            assertEquals("cancelled at 2", outcome.get());
        });
        assertTrue(side.get().join(Duration.ofSeconds(10)));
        assertEquals(5, io.nowMs());
    }

    @Test
    void manyShortTurnsLoseNoWakeUp() throws InterruptedException {
        for (int run = 0; run < 200; run++) {
            BlockingIo io = BlockingIo.builder().virtualClock().build();
            AtomicInteger total = new AtomicInteger();
            List<Thread> sides = new ArrayList<>();
            Io.with(io).run(() -> {
                for (int s = 0; s < 3; s++) {
                    sides.add(side(io, "side", () -> {
                        for (int i = 0; i < 10; i++) {
                            total.incrementAndGet();
                            Io.sleep(Duration.ofMillis(1));
                        }
                    }));
                }
                Io.sleep(Duration.ofMillis(20));
            });
            for (Thread t : sides) {
                assertTrue(t.join(Duration.ofSeconds(10)), "run " + run + ": " + io);
            }
            assertEquals(30, total.get());
            assertEquals(20, io.nowMs());
        }
    }

    @Test
    void twoPlainThreadsWithoutSideThreadsBothWakeAsBefore() throws InterruptedException {
        for (int run = 0; run < 200; run++) {
            BlockingIo io = BlockingIo.builder().virtualClock().build();
            Thread a = Thread.ofPlatform().start(() -> Io.with(io).run(() -> Io.sleep(Duration.ofMillis(10))));
            Thread b = Thread.ofPlatform().start(() -> Io.with(io).run(() -> Io.sleep(Duration.ofMillis(5))));
            assertTrue(a.join(Duration.ofSeconds(10)), "run " + run + ": the 10 ms sleeper hung, " + io);
            assertTrue(b.join(Duration.ofSeconds(10)), "run " + run + ": the 5 ms sleeper hung, " + io);
            // 10 if both slept at once, 15 if one thread began only after the other's jump: two
            // threads outside any world race, as they always did; what matters is that neither hangs
            assertTrue(io.nowMs() == 10 || io.nowMs() == 15, String.valueOf(io.nowMs()));
        }
    }

    @Test
    void aThreadEnteringTheWorldWhileASideThreadLivesWaitsForItsTurn() throws InterruptedException {
        Set<List<String>> traces = new LinkedHashSet<>();
        for (int run = 0; run < 20; run++) {
            BlockingIo io = BlockingIo.builder().virtualClock().build();
            Log log = new Log(io);
            AtomicReference<Thread> sleeper = new AtomicReference<>();
            Io.with(io)
                    .run(() -> sleeper.set(side(io, "sleeper", () -> {
                        log.step("side before");
                        Io.sleep(Duration.ofMillis(10));
                        log.step("side after");
                    })));
            // the side thread got the turn when the first body ended; this one waits for it
            Io.with(io).run(() -> {
                log.step("main");
                Io.sleep(Duration.ofMillis(5));
                log.step("main after");
            });
            assertTrue(sleeper.get().join(Duration.ofSeconds(10)));
            assertFalse(log.overlapped.get(), "two members ran at once: " + log.lines());
            traces.add(log.lines());
        }
        // between its two bodies main is outside the world, so whether the side thread's sleep
        // jumps the clock before main comes back is the JDK's call; either way they never overlap
        Set<List<String>> legal = Set.of(
                List.of("0 side before", "0 main", "5 main after", "10 side after"),
                List.of("0 side before", "10 side after", "10 main", "15 main after"));
        assertTrue(legal.containsAll(traces), String.valueOf(traces));
    }

    @Test
    void aNestedBindingThroughAnotherIoDoesNotLeaveTheWorld() throws InterruptedException {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        BlockingIo other = BlockingIo.create();
        Log log = new Log(io);
        AtomicReference<Thread> side = new AtomicReference<>();
        Io.with(io).run(() -> {
            side.set(side(io, "side", () -> log.step("side")));
            Io.with(other).run(() -> Io.with(io).run(() -> log.step("innermost")));
            log.step("main, still holding the turn"); // the side thread must not run before main waits
            Io.sleep(Duration.ofMillis(1));
        });
        assertTrue(side.get().join(Duration.ofSeconds(10)));
        assertEquals(List.of("0 innermost", "0 main, still holding the turn", "0 side"), log.lines());
        assertFalse(log.overlapped.get());
    }

    @Test
    void onceTheLastSideThreadEndsNobodyHoldsATurn() throws InterruptedException {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        AtomicReference<String> outcome = new AtomicReference<>();
        Io.with(io).run(() -> {
            Thread shortLived = side(io, "short", () -> {});
            Io.sleep(Duration.ofMillis(1)); // the side thread runs and ends: the world dissolves
            // main is still inside Io.with, but holds no turn: a plain thread can sleep on the clock
            Thread plain = Thread.ofPlatform().start(() -> Io.with(io).run(() -> Io.sleep(Duration.ofMillis(5))));
            try {
                outcome.set(shortLived.join(Duration.ofSeconds(10)) + " " + plain.join(Duration.ofSeconds(10)));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertEquals("true true", outcome.get());
        assertEquals(6, io.nowMs());
    }

    @Test
    void yieldHandsTheTurnToAnotherMemberThatCanRun() throws InterruptedException {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger laps = new AtomicInteger();
        List<Thread> sides = new ArrayList<>();
        Io.with(io).run(() -> {
            sides.add(side(io, "yielder", () -> {
                while (!done.get()) {
                    laps.incrementAndGet();
                    Io.yield(); // a virtual thread: without handing the turn on, the other never runs
                }
            }));
            sides.add(side(io, "finisher", () -> done.set(true)));
            Io.yield(); // main (a platform thread) steps aside too, through BlockingIo.poll
        });
        for (Thread t : sides) {
            assertTrue(t.join(Duration.ofSeconds(10)), t + " hung: " + io);
        }
        assertEquals(1, laps.get(), "the yielder ran once, then the finisher, then the yielder saw it");
    }
}
