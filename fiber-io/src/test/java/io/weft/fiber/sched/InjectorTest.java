package io.weft.fiber.sched;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class InjectorTest {

    /** A task that only knows its number. */
    record Numbered(int id) implements Runnable {
        @Override
        public void run() {}
    }

    private static Set<Runnable> numberedSet(int from, int count) {
        return new HashSet<>(Arrays.asList(numbered(from, count)));
    }

    private static Runnable[] numbered(int from, int count) {
        Runnable[] tasks = new Runnable[count];
        for (int i = 0; i < count; i++) {
            tasks[i] = new Numbered(from + i);
        }
        return tasks;
    }

    /**
     * With no memory for nodes, a wake-up waits in a rescue slot, until every slot is taken; then
     * it throws, as a plain push does at once. Rescued tasks count in size() and isEmpty(), come
     * out of pop and popBatch first, and free their slots for more wake-ups, any number of them.
     */
    @Test
    void aWakeUpWithNoMemoryForItsNodeWaitsInARescueSlotUntilNoneIsFree() {
        FailingInjector injector = new FailingInjector(false);
        injector.push(new Numbered(-1));
        injector.noMemoryForNodes = true;
        assertThrows(OutOfMemoryError.class, () -> injector.push(new Numbered(-2)), "a plain push gets no slot");
        for (int i = 0; i < Injector.RESCUE_SLOTS; i++) {
            injector.pushWakeUp(new Numbered(i));
        }
        assertThrows(OutOfMemoryError.class, () -> injector.pushWakeUp(new Numbered(Injector.RESCUE_SLOTS)));
        assertEquals(Injector.RESCUE_SLOTS, injector.rescuedCount());
        assertEquals(Injector.RESCUE_SLOTS + 1, injector.size());

        Runnable[] batch = new Runnable[Injector.RESCUE_SLOTS + 1];
        assertEquals(Injector.RESCUE_SLOTS + 1, injector.popBatch(batch, batch.length));
        assertEquals(
                numberedSet(0, Injector.RESCUE_SLOTS),
                new HashSet<>(Arrays.asList(batch).subList(0, Injector.RESCUE_SLOTS)),
                "the rescued wake-ups first, each once");
        assertEquals(new Numbered(-1), batch[Injector.RESCUE_SLOTS]);
        assertTrue(injector.isEmpty());
        assertEquals(0, injector.rescuedCount());

        for (int round = 0; round < 3; round++) { // the slots are free again, for any number of wake-ups
            for (int i = 0; i < Injector.RESCUE_SLOTS; i++) {
                injector.pushWakeUp(new Numbered(i));
            }
            assertFalse(injector.isEmpty());
            Set<Runnable> popped = new HashSet<>();
            for (int i = 0; i < Injector.RESCUE_SLOTS; i++) {
                popped.add(injector.pop());
            }
            assertEquals(numberedSet(0, Injector.RESCUE_SLOTS), popped, "round " + round);
            assertNull(injector.pop());
        }
        injector.noMemoryForNodes = false;
        injector.pushWakeUp(new Numbered(100));
        assertEquals(0, injector.rescuedCount(), "with memory, a wake-up gets a node");
        assertEquals(new Numbered(100), injector.pop());
    }

    /**
     * Rescue slots under contention: wake-ups pushed from several threads with no memory for
     * nodes, while another thread takes them, are each taken exactly once, and none is left.
     */
    @Test
    void rescuedWakeUpsPushedAndTakenConcurrentlyAreEachTakenOnce() throws InterruptedException {
        FailingInjector injector = new FailingInjector(false);
        injector.noMemoryForNodes = true;
        int pushers = 3;
        int each = 20_000;
        AtomicIntegerArray taken = new AtomicIntegerArray(pushers * each);
        AtomicInteger left = new AtomicInteger(pushers * each);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < pushers; p++) {
            int first = p * each;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = first; i < first + each; i++) {
                    while (true) {
                        try {
                            injector.pushWakeUp(new Numbered(i));
                            break;
                        } catch (OutOfMemoryError full) {
                            Thread.onSpinWait(); // every slot taken: the JDK would retry too
                        }
                    }
                }
            }));
        }
        Runnable[] batch = new Runnable[8];
        Thread taker = Thread.ofPlatform().start(() -> {
            while (left.get() > 0) {
                int n = injector.popBatch(batch, batch.length);
                for (int i = 0; i < n; i++) {
                    taken.incrementAndGet(((Numbered) batch[i]).id());
                    left.decrementAndGet();
                }
            }
        });
        for (Thread t : threads) {
            t.join(Duration.ofSeconds(20));
        }
        taker.join(Duration.ofSeconds(20));
        assertFalse(taker.isAlive(), "every wake-up was taken");
        for (int i = 0; i < pushers * each; i++) {
            assertEquals(1, taken.get(i), "wake-up " + i);
        }
        assertTrue(injector.isEmpty());
        assertEquals(0, injector.rescuedCount());
    }

    @Test
    void popReturnsTasksInPushOrder() {
        Injector injector = new Injector();
        Runnable[] tasks = numbered(0, 5);
        for (Runnable task : tasks) {
            injector.push(task);
        }
        for (Runnable task : tasks) {
            assertSame(task, injector.pop());
        }
        assertNull(injector.pop());
    }

    @Test
    void sizeAndIsEmptyFollowPushesAndPops() {
        Injector injector = new Injector();
        assertTrue(injector.isEmpty());
        assertEquals(0, injector.size());
        injector.push(new Numbered(0));
        injector.pushBatch(numbered(1, 3), 0, 3);
        assertFalse(injector.isEmpty());
        assertEquals(4, injector.size());
        injector.pop();
        assertEquals(3, injector.size());
        injector.popBatch(new Runnable[8], 8);
        assertTrue(injector.isEmpty());
        assertEquals(0, injector.size());
    }

    @Test
    void pushBatchAppendsTheRangeInOrderAfterEarlierTasks() {
        Injector injector = new Injector();
        Runnable first = new Numbered(-1);
        injector.push(first);
        Runnable[] batch = numbered(0, 5);
        injector.pushBatch(batch, 1, 3);

        Runnable[] into = new Runnable[10];
        assertEquals(4, injector.popBatch(into, 10));
        assertArrayEquals(new Runnable[] {first, batch[1], batch[2], batch[3]}, Arrays.copyOf(into, 4));
        assertNull(into[4]);
    }

    @Test
    void popBatchTakesAtMostMaxOldestFirstAndLeavesTheRest() {
        Injector injector = new Injector();
        Runnable[] tasks = numbered(0, 7);
        injector.pushBatch(tasks, 0, tasks.length);

        Runnable[] into = new Runnable[3];
        assertEquals(3, injector.popBatch(into, 3));
        assertArrayEquals(Arrays.copyOfRange(tasks, 0, 3), into);
        assertEquals(2, injector.popBatch(into, 2));
        assertArrayEquals(Arrays.copyOfRange(tasks, 3, 5), Arrays.copyOf(into, 2));
        assertEquals(2, injector.size());
        assertSame(tasks[5], injector.pop());
        assertSame(tasks[6], injector.pop());
    }

    @Test
    void popBatchOnEmptyOrWithZeroMaxTakesNothing() {
        Injector injector = new Injector();
        Runnable[] into = new Runnable[4];
        assertEquals(0, injector.popBatch(into, 4));
        injector.push(new Numbered(0));
        assertEquals(0, injector.popBatch(into, 0));
        assertEquals(1, injector.size());
        assertNull(into[0]);
    }

    @Test
    void popBatchRejectsMaxBeyondTheBufferOrNegative() {
        Injector injector = new Injector();
        injector.push(new Numbered(0));
        assertThrows(IllegalArgumentException.class, () -> injector.popBatch(new Runnable[2], 3));
        assertThrows(IllegalArgumentException.class, () -> injector.popBatch(new Runnable[2], -1));
        assertEquals(1, injector.size());
    }

    @Test
    void pushBatchWithANullPushesNothing() {
        Injector injector = new Injector();
        Runnable[] batch = numbered(0, 3);
        batch[2] = null;
        assertThrows(NullPointerException.class, () -> injector.pushBatch(batch, 0, 3));
        assertTrue(injector.isEmpty());
        assertThrows(NullPointerException.class, () -> injector.push(null));
        assertTrue(injector.isEmpty());
    }

    @Test
    void pushBatchRejectsARangeOutsideTheArray() {
        Injector injector = new Injector();
        Runnable[] batch = numbered(0, 3);
        assertThrows(IndexOutOfBoundsException.class, () -> injector.pushBatch(batch, 2, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> injector.pushBatch(batch, -1, 1));
        assertTrue(injector.isEmpty());
        injector.pushBatch(batch, 3, 0);
        assertTrue(injector.isEmpty());
    }

    @ParameterizedTest(name = "fairShare({0}, {1}) = {2}")
    @CsvSource({
        "0, 2, 0", // nothing to take
        "1, 2, 1", // at least min(4, length): a short queue is taken whole...
        "3, 2, 3",
        "4, 2, 4",
        "9, 2, 4", // ...up to 4, even when the fair share is smaller
        "10, 4, 4",
        "2, 8, 2",
        "5, 1, 5", // one worker takes everything, up to 64
        "63, 1, 63",
        "100, 2, 50", // length / workers
        "128, 2, 64",
        "1000, 2, 64", // never more than 64
        "1000, 1, 64"
    })
    void fairShareIsLengthOverWorkersCappedAt64ButAtLeastFourOrTheWholeQueue(int length, int workers, int expected) {
        assertEquals(expected, Injector.fairShare(length, workers));
    }

    @Test
    void fairShareRejectsNegativeLengthAndNoWorkers() {
        assertThrows(IllegalArgumentException.class, () -> Injector.fairShare(-1, 2));
        assertThrows(IllegalArgumentException.class, () -> Injector.fairShare(10, 0));
    }

    @Test
    void concurrentPushersAndPoppersConserveEveryTask() throws Exception {
        int pushers = 3;
        int poppers = 2;
        int perPusher = 60_000;
        int total = pushers * perPusher;
        Injector injector = new Injector();
        AtomicIntegerArray seen = new AtomicIntegerArray(total);
        AtomicInteger popped = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();

        addPushers(threads, injector, pushers, perPusher, 5, 3, failure, start);
        for (int c = 0; c < poppers; c++) {
            boolean batches = c % 2 == 0;
            threads.add(platform("popper-" + c, failure, start, () -> {
                Runnable[] into = new Runnable[Injector.MAX_BATCH];
                while (popped.get() < total && failure.get() == null) {
                    int n;
                    if (batches) {
                        n = injector.popBatch(into, Injector.fairShare(injector.size(), poppers));
                    } else {
                        into[0] = injector.pop();
                        n = into[0] == null ? 0 : 1;
                    }
                    for (int i = 0; i < n; i++) {
                        seen.incrementAndGet(((Numbered) into[i]).id());
                    }
                    if (n == 0) {
                        Thread.onSpinWait();
                    } else {
                        popped.addAndGet(n);
                    }
                }
            }));
        }

        runAll(threads, failure, start);
        assertEquals(total, popped.get());
        assertTrue(injector.isEmpty());
        for (int i = 0; i < total; i++) {
            assertEquals(1, seen.get(i), "task " + i);
        }
    }

    /**
     * Single pushes take no lock (a stack moved into the deque under the lock): each pusher's
     * tasks, single or batched, still come out in the order it pushed them, to one popper.
     */
    @Test
    void eachPushersTasksComeOutInItsOrder() throws Exception {
        int pushers = 3;
        int perPusher = 40_000;
        Injector injector = new Injector();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        addPushers(threads, injector, pushers, perPusher, 7, 2, failure, start);
        int[] last = new int[pushers];
        Arrays.fill(last, -1);
        int[] count = {0};
        threads.add(platform("popper", failure, start, () -> {
            Runnable[] into = new Runnable[Injector.MAX_BATCH];
            while (count[0] < pushers * perPusher && failure.get() == null) {
                int n = injector.popBatch(into, Math.max(1, Injector.fairShare(injector.size(), 1)));
                for (int i = 0; i < n; i++) {
                    int id = ((Numbered) into[i]).id();
                    int pusher = id / perPusher;
                    if (id <= last[pusher]) {
                        throw new AssertionError("pusher " + pusher + ": " + id + " came out after " + last[pusher]);
                    }
                    last[pusher] = id;
                }
                count[0] += n;
                if (n == 0) {
                    Thread.onSpinWait();
                }
            }
        }));
        runAll(threads, failure, start);
        assertEquals(pushers * perPusher, count[0]);
        assertTrue(injector.isEmpty());
    }

    /**
     * Adds {@code pushers} threads pushing ids {@code p * perPusher ..} in order: every
     * {@code batchEvery}-th id starts a pushBatch of {@code batchSize}, the others are single pushes.
     */
    static void addPushers(
            List<Thread> threads,
            Injector injector,
            int pushers,
            int perPusher,
            int batchEvery,
            int batchSize,
            AtomicReference<Throwable> failure,
            CountDownLatch start) {
        for (int p = 0; p < pushers; p++) {
            int base = p * perPusher;
            threads.add(platform("pusher-" + p, failure, start, () -> {
                for (int i = 0; i < perPusher; ) {
                    if (i % batchEvery == 0 && i + batchSize <= perPusher) {
                        injector.pushBatch(numbered(base + i, batchSize), 0, batchSize);
                        i += batchSize;
                    } else {
                        injector.push(new Numbered(base + i++));
                    }
                }
            }));
        }
    }

    /** Opens {@code start}, waits for every thread, and fails with the first thread's failure. */
    static void runAll(List<Thread> threads, AtomicReference<Throwable> failure, CountDownLatch start)
            throws InterruptedException {
        start.countDown();
        for (Thread thread : threads) {
            assertTrue(thread.join(Duration.ofSeconds(50)), thread + " did not finish");
        }
        if (failure.get() != null) {
            throw new AssertionError("a thread failed", failure.get());
        }
    }

    /** Starts a platform thread that waits for {@code start}, runs {@code body}, records a failure. */
    static Thread platform(String name, AtomicReference<Throwable> failure, CountDownLatch start, Runnable body) {
        return Thread.ofPlatform().name(name).daemon().start(() -> {
            try {
                if (!start.await(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("start latch never opened");
                }
                body.run();
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        });
    }
}
