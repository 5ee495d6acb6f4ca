package io.weft.fiber.time;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Io;
import io.weft.ParkToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class TimerHeapTest {

    private final TimerHeap timers = new TimerHeap();

    @Test
    void firesInDeadlineOrderWithTiesInArmingOrder() {
        ParkToken a = ParkToken.create();
        ParkToken b = ParkToken.create();
        ParkToken c = ParkToken.create();
        ParkToken d = ParkToken.create();
        ParkToken e = ParkToken.create();
        timers.arm(30, a);
        timers.arm(10, b);
        timers.arm(20, c);
        timers.arm(10, d);
        timers.arm(20, e);
        List<ParkToken> fired = new ArrayList<>();

        int count = timers.fireDue(100, fired::add);

        assertEquals(List.of(b, d, c, e, a), fired);
        assertEquals(5, count);
        assertEquals(0, timers.size());
        assertEquals(Io.NO_DEADLINE, timers.nextDeadline());
    }

    /**
     * Timers that left the heap are delivered even when collecting them fails: the tie breaker
     * throwing here stands for the allocation that can fail with the heap full. They used to be
     * dropped with the exception, and their sleepers parked for good.
     */
    @Test
    void timersThatLeftTheHeapAreDeliveredWhenCollectingThemFails() {
        ParkToken a = ParkToken.create();
        ParkToken b = ParkToken.create();
        ParkToken notDue = ParkToken.create();
        timers.arm(10, a);
        timers.arm(10, b);
        timers.arm(50, notDue);
        OutOfMemoryError noMemory = new OutOfMemoryError("no memory (test)");
        java.util.random.RandomGenerator broken = () -> {
            throw noMemory;
        };
        List<ParkToken> fired = new ArrayList<>();
        OutOfMemoryError thrown = assertThrows(OutOfMemoryError.class, () -> timers.fireDue(10, fired::add, broken));
        assertSame(noMemory, thrown);
        assertEquals(List.of(a, b), fired, "a timer that left the heap was lost");
        assertEquals(1, timers.size());
        assertEquals(50, timers.nextDeadline());
    }

    @Test
    void fireDueFiresExactlyTheTimersDueAtOrBeforeNow() {
        ParkToken early = ParkToken.create();
        ParkToken onTime = ParkToken.create();
        ParkToken late = ParkToken.create();
        timers.arm(-5, early);
        timers.arm(10, onTime);
        timers.arm(11, late);
        List<ParkToken> fired = new ArrayList<>();

        assertEquals(0, timers.fireDue(-6, fired::add));
        assertEquals(List.of(), fired);
        assertEquals(2, timers.fireDue(10, fired::add));
        assertEquals(List.of(early, onTime), fired);
        assertEquals(1, timers.size());
        assertEquals(11, timers.nextDeadline());
        assertEquals(0, timers.fireDue(10, fired::add), "nothing is fired twice");
        assertEquals(1, timers.fireDue(11, fired::add));
        assertEquals(List.of(early, onTime, late), fired);
    }

    @Test
    void cancelBeforeFireRemovesTheTimerAndReturnsTrueOnce() {
        ParkToken kept = ParkToken.create();
        ParkToken cancelled = ParkToken.create();
        timers.arm(20, kept);
        TimerHeap.Entry entry = timers.arm(10, cancelled);
        assertEquals(2, timers.size());
        assertEquals(10, timers.nextDeadline());

        assertTrue(entry.cancel());
        assertEquals(1, timers.size());
        assertEquals(20, timers.nextDeadline(), "the cancelled root no longer counts");
        assertFalse(entry.cancel(), "a second cancel does nothing");
        assertEquals(1, timers.size());

        List<ParkToken> fired = new ArrayList<>();
        timers.fireDue(100, fired::add);
        assertEquals(List.of(kept), fired);
    }

    @Test
    void cancelAfterFireReturnsFalse() {
        TimerHeap.Entry entry = timers.arm(5, ParkToken.create());
        assertEquals(1, timers.fireDue(5, park -> {}));

        assertFalse(entry.cancel());
        assertEquals(0, timers.size());
    }

    @Test
    void noDeadlineTimersNeverFireAndAreNeverTheNextDeadlineButCanBeCancelled() {
        ParkToken never = ParkToken.create();
        ParkToken soon = ParkToken.create();
        TimerHeap.Entry neverEntry = timers.arm(Io.NO_DEADLINE, never);
        assertEquals(Io.NO_DEADLINE, timers.nextDeadline());
        assertEquals(1, timers.size());
        timers.arm(5, soon);
        assertEquals(5, timers.nextDeadline());
        List<ParkToken> fired = new ArrayList<>();

        assertEquals(1, timers.fireDue(Long.MAX_VALUE, fired::add), "not even at the end of time");
        assertEquals(List.of(soon), fired);
        assertEquals(Io.NO_DEADLINE, timers.nextDeadline());
        assertEquals(1, timers.size());
        assertTrue(neverEntry.cancel());
        assertEquals(0, timers.size());
    }

    @Test
    void readyRunsAfterTheLockIsReleased() {
        timers.arm(1, ParkToken.create());
        AtomicInteger sizeSeenByAnotherThread = new AtomicInteger(-1);

        timers.fireDue(1, park -> {
            // Another thread needs the lock: this would deadlock (and time out) if ready ran under it.
            Thread other = Thread.ofPlatform().start(() -> sizeSeenByAnotherThread.set(timers.size()));
            joinUninterruptibly(other);
        });

        assertEquals(0, sizeSeenByAnotherThread.get());
    }

    @Test
    void aThrowingReadyStillReceivesEveryDueTokenThenTheFirstFailureIsRethrown() {
        List<ParkToken> tokens = List.of(ParkToken.create(), ParkToken.create(), ParkToken.create());
        for (ParkToken park : tokens) {
            timers.arm(1, park);
        }
        List<ParkToken> received = new ArrayList<>();
        RuntimeException first = new IllegalStateException("first");
        RuntimeException second = new IllegalStateException("second");

        RuntimeException thrown = assertThrows(
                RuntimeException.class,
                () -> timers.fireDue(1, park -> {
                    received.add(park);
                    if (received.size() == 1) {
                        throw first;
                    }
                    if (received.size() == 2) {
                        throw second;
                    }
                }));

        assertSame(first, thrown);
        assertEquals(List.of(second), List.of(thrown.getSuppressed()));
        assertEquals(tokens, received);
        assertEquals(0, timers.size());
    }

    @Test
    void armRejectsANullToken() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> timers.arm(1, null));
        assertEquals("park", e.getMessage());
        assertEquals(0, timers.size());
    }

    @Test
    void randomOperationsMatchASortedListModel() {
        Random random = new Random(20_240_601);
        Model model = new Model();
        List<TimerHeap.Entry> entries = new ArrayList<>();
        List<ModelEntry> modelEntries = new ArrayList<>();
        Map<ParkToken, Integer> ids = new IdentityHashMap<>();
        long now = 0;

        for (int op = 0; op < 10_000; op++) {
            int kind = random.nextInt(100);
            String step = "op " + op;
            if (kind < 45 || entries.isEmpty()) {
                long deadline = random.nextInt(20) == 0 ? Io.NO_DEADLINE : now - 5 + random.nextInt(60);
                ParkToken park = ParkToken.create();
                ids.put(park, ids.size());
                entries.add(timers.arm(deadline, park));
                modelEntries.add(model.arm(deadline, park));
            } else if (kind < 75) {
                int victim = random.nextInt(entries.size());
                assertEquals(
                        model.cancel(modelEntries.get(victim)),
                        entries.get(victim).cancel(),
                        step + ": cancel of timer " + victim);
            } else {
                now += random.nextInt(20);
                List<Integer> fired = new ArrayList<>();
                int count = timers.fireDue(now, park -> fired.add(ids.get(park)));
                List<Integer> expected =
                        model.fireDue(now).stream().map(ids::get).toList();
                assertEquals(expected, fired, step + ": fireDue(" + now + ")");
                assertEquals(expected.size(), count, step);
            }
            assertEquals(model.size(), timers.size(), step + ": size");
            assertEquals(model.nextDeadline(), timers.nextDeadline(), step + ": nextDeadline");
        }

        List<Integer> rest = new ArrayList<>();
        timers.fireDue(Long.MAX_VALUE, park -> rest.add(ids.get(park)));
        assertEquals(model.fireDue(Long.MAX_VALUE).stream().map(ids::get).toList(), rest, "final drain");
        assertEquals(model.size(), timers.size(), "only NO_DEADLINE timers remain");
        assertTrue(model.size() > 0, "the run exercised NO_DEADLINE timers");
    }

    @Test
    void concurrentArmAndCancelWithAFirerFireOrCancelEachTimerExactlyOnce() throws Exception {
        int armers = 4;
        int timersPerArmer = 20_000;
        AtomicLong clock = new AtomicLong();
        Map<ParkToken, AtomicInteger> fired = new ConcurrentHashMap<>();
        List<List<ParkToken>> tokensByArmer = new ArrayList<>();
        List<AtomicInteger[]> cancelsByArmer = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean armersDone = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();

        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < armers; t++) {
            long seed = 1_000 + t;
            List<ParkToken> tokens = new ArrayList<>();
            AtomicInteger[] cancels = new AtomicInteger[timersPerArmer];
            tokensByArmer.add(tokens);
            cancelsByArmer.add(cancels);
            threads.add(Thread.ofPlatform()
                    .name("armer-" + t)
                    .start(() -> guard(failure, () -> {
                        Random random = new Random(seed);
                        List<TimerHeap.Entry> mine = new ArrayList<>();
                        awaitUninterruptibly(start);
                        for (int i = 0; i < timersPerArmer; i++) {
                            ParkToken park = ParkToken.create();
                            tokens.add(park);
                            cancels[i] = new AtomicInteger();
                            // Armed so that entries become due while other threads cancel them.
                            mine.add(timers.arm(clock.get() + random.nextInt(4), park));
                            if (random.nextBoolean()) {
                                int victim = i - random.nextInt(Math.min(i + 1, 16));
                                if (mine.get(victim).cancel()) {
                                    cancels[victim].incrementAndGet();
                                }
                            }
                        }
                    })));
        }
        Thread firer = Thread.ofPlatform()
                .name("firer")
                .start(() -> guard(failure, () -> {
                    awaitUninterruptibly(start);
                    while (!armersDone.get()) {
                        timers.fireDue(
                                clock.incrementAndGet(),
                                park -> fired.computeIfAbsent(park, p -> new AtomicInteger())
                                        .incrementAndGet());
                    }
                }));
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        armersDone.set(true);
        firer.join();
        timers.fireDue(
                Long.MAX_VALUE - 1,
                park -> fired.computeIfAbsent(park, p -> new AtomicInteger()).incrementAndGet());

        assertEquals(null, failure.get());
        assertEquals(0, timers.size());
        int firedTotal = 0;
        int cancelledTotal = 0;
        for (int t = 0; t < armers; t++) {
            List<ParkToken> tokens = tokensByArmer.get(t);
            AtomicInteger[] cancels = cancelsByArmer.get(t);
            for (int i = 0; i < tokens.size(); i++) {
                AtomicInteger f = fired.get(tokens.get(i));
                int firedCount = f == null ? 0 : f.get();
                int cancelCount = cancels[i].get();
                assertEquals(
                        1,
                        firedCount + cancelCount,
                        "armer " + t + " timer " + i + ": fired " + firedCount + ", cancelled " + cancelCount);
                firedTotal += firedCount;
                cancelledTotal += cancelCount;
            }
        }
        assertEquals(firedTotal, fired.size(), "every fired token was armed by this test");
        assertTrue(
                firedTotal > 0 && cancelledTotal > 0,
                "both outcomes happened: fired " + firedTotal + ", cancelled " + cancelledTotal);
    }

    // ---------------------------------------------------------------- reference model

    private static final class ModelEntry {
        final long deadline;
        final long sequence;
        final ParkToken park;
        boolean armed = true;

        ModelEntry(long deadline, long sequence, ParkToken park) {
            this.deadline = deadline;
            this.sequence = sequence;
            this.park = park;
        }
    }

    /** The obvious implementation: a list kept sorted by (deadline, sequence). */
    private static final class Model {
        private static final Comparator<ModelEntry> ORDER =
                Comparator.<ModelEntry>comparingLong(e -> e.deadline).thenComparingLong(e -> e.sequence);
        private final List<ModelEntry> sorted = new ArrayList<>();
        private long sequence;

        ModelEntry arm(long deadline, ParkToken park) {
            ModelEntry entry = new ModelEntry(deadline, sequence++, park);
            sorted.add(entry);
            sorted.sort(ORDER);
            return entry;
        }

        boolean cancel(ModelEntry entry) {
            if (!entry.armed) {
                return false;
            }
            entry.armed = false;
            sorted.remove(entry);
            return true;
        }

        List<ParkToken> fireDue(long now) {
            List<ParkToken> due = new ArrayList<>();
            while (!sorted.isEmpty()
                    && sorted.getFirst().deadline <= now
                    && sorted.getFirst().deadline != Io.NO_DEADLINE) {
                ModelEntry first = sorted.removeFirst();
                first.armed = false;
                due.add(first.park);
            }
            return due;
        }

        long nextDeadline() {
            return sorted.isEmpty() ? Io.NO_DEADLINE : sorted.getFirst().deadline;
        }

        int size() {
            return sorted.size();
        }
    }

    // ---------------------------------------------------------------- helpers

    private static void guard(AtomicReference<Throwable> failure, Runnable body) {
        try {
            body.run();
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void joinUninterruptibly(Thread thread) {
        try {
            if (!thread.join(Duration.ofSeconds(30))) {
                throw new AssertionError(thread + " did not finish: is ready called under the lock?");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
