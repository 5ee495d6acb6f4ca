package io.weft.fiber.sched;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.fiber.sched.InjectorTest.Numbered;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RunQueueTest {

    /** Start indices that put the unsigned counters at 0, just below 2^31 and just below 2^32. */
    private static final int[] STARTS = {0, Integer.MAX_VALUE - 2, -3, -1};

    private static List<Runnable> pushAll(RunQueue queue, Injector injector, int from, int count) {
        List<Runnable> tasks = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Runnable task = new Numbered(from + i);
            tasks.add(task);
            queue.push(task, injector);
        }
        return tasks;
    }

    private static List<Runnable> popAll(RunQueue queue) {
        List<Runnable> tasks = new ArrayList<>();
        Runnable task = queue.pop();
        while (task != null) {
            tasks.add(task);
            task = queue.pop();
        }
        return tasks;
    }

    private static List<Runnable> popAll(Injector injector) {
        List<Runnable> tasks = new ArrayList<>();
        Runnable task = injector.pop();
        while (task != null) {
            tasks.add(task);
            task = injector.pop();
        }
        return tasks;
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 3, 6, 12, 3 << 10, -4, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void rejectsACapacityThatIsNotAPowerOfTwoOfAtLeastTwo(int capacity) {
        assertThrows(IllegalArgumentException.class, () -> new RunQueue(capacity));
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 256, 1 << 16})
    void acceptsPowersOfTwoAndReportsTheCapacity(int capacity) {
        RunQueue queue = new RunQueue(capacity);
        assertEquals(capacity, queue.capacity());
        assertTrue(queue.isEmpty());
        assertEquals(0, queue.size());
    }

    @Test
    void pushAllAppendsTheRangeInOrderAfterEarlierTasks() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(8, start);
            Injector injector = new Injector();
            List<Runnable> expected = pushAll(queue, injector, 0, 2);
            Runnable[] batch = {new Numbered(100), new Numbered(2), new Numbered(3), new Numbered(4), null};
            queue.pushAll(batch, 1, 3, injector);
            expected.addAll(List.of(batch[1], batch[2], batch[3]));
            assertEquals(5, queue.size(), "start " + start);
            assertEquals(expected, popAll(queue), "start " + start);
            assertTrue(injector.isEmpty(), "start " + start);
        }
    }

    @Test
    void pushAllBeyondTheRoomLeftOverflowsAsPushingEachWould() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, start);
            Injector injector = new Injector();
            List<Runnable> first = pushAll(queue, injector, 0, 3);
            Runnable[] batch = {new Numbered(3), new Numbered(4), new Numbered(5)};
            queue.pushAll(batch, 0, 3, injector);
            // 3 and 4's push found the ring full: the two oldest (0, 1) and 4 moved, in that order
            assertEquals(List.of(first.get(0), first.get(1), batch[1]), popAll(injector), "start " + start);
            assertEquals(List.of(first.get(2), batch[0], batch[2]), popAll(queue), "start " + start);
        }
    }

    @Test
    void anOverflowThatCannotReachTheInjectorLosesNoQueuedTaskAndQueuesNotTheNewOne() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, start);
            FailingInjector injector = new FailingInjector(true);
            List<Runnable> first = pushAll(queue, injector, 0, 4); // full
            Runnable refused = new Numbered(4);
            OutOfMemoryError thrown = assertThrows(OutOfMemoryError.class, () -> queue.push(refused, injector));
            assertTrue(thrown.getMessage().startsWith("test:"), thrown.getMessage());
            assertEquals(4, queue.size(), "start " + start);
            assertTrue(injector.isEmpty(), "start " + start);
            // The half the overflow had claimed (0, 1) is back, behind the others; the queue works on:
            // the next overflow moves the two oldest of that order and the new task
            Runnable next = new Numbered(5);
            queue.push(next, injector);
            assertEquals(List.of(first.get(2), first.get(3), next), popAll(injector), "start " + start);
            assertEquals(List.of(first.get(0), first.get(1)), popAll(queue), "start " + start);
        }
    }

    @Test
    void popIfHeadRemovesOnlyTheOldestTask() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, start);
            Injector injector = new Injector();
            assertFalse(queue.popIfHead(new Numbered(0)), "empty, start " + start);
            List<Runnable> pushed = pushAll(queue, injector, 0, 3);
            assertFalse(queue.popIfHead(pushed.get(1)), "not the oldest, start " + start);
            assertTrue(queue.popIfHead(pushed.get(0)), "start " + start);
            assertFalse(queue.popIfHead(pushed.get(0)), "already gone, start " + start);
            assertEquals(List.of(pushed.get(1), pushed.get(2)), popAll(queue), "start " + start);
        }
    }

    @Test
    void pushAllWithANullOrABadRangePushesNothing() {
        RunQueue queue = new RunQueue(4);
        Injector injector = new Injector();
        Runnable[] withNull = {new Numbered(0), null};
        assertThrows(NullPointerException.class, () -> queue.pushAll(withNull, 0, 2, injector));
        assertThrows(IndexOutOfBoundsException.class, () -> queue.pushAll(withNull, 1, 2, injector));
        assertTrue(queue.isEmpty());
        assertTrue(injector.isEmpty());
    }

    @Test
    void popReturnsTasksInPushOrderThenNull() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, start);
            Injector injector = new Injector();
            List<Runnable> pushed = pushAll(queue, injector, 0, 4);
            assertEquals(4, queue.size());
            assertEquals(pushed, popAll(queue));
            assertNull(queue.pop());
            assertTrue(queue.isEmpty());
            assertTrue(injector.isEmpty());
        }
    }

    @Test
    void pushRejectsNull() {
        RunQueue queue = new RunQueue(4);
        assertThrows(NullPointerException.class, () -> queue.push(null, new Injector()));
        assertTrue(queue.isEmpty());
    }

    @Test
    void fifthPushIntoAFullQueueOfFourMovesTheTwoOldestAndTheNewTaskToTheInjectorInOrder() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, start);
            Injector injector = new Injector();
            List<Runnable> tasks = pushAll(queue, injector, 0, 5);

            assertEquals(3, injector.size());
            Runnable[] moved = new Runnable[3];
            assertEquals(3, injector.popBatch(moved, 3));
            assertArrayEquals(new Runnable[] {tasks.get(0), tasks.get(1), tasks.get(4)}, moved);
            assertEquals(List.of(tasks.get(2), tasks.get(3)), popAll(queue));
        }
    }

    @Test
    void overflowAgainAfterRefillingMovesTheNextOldestHalf() {
        RunQueue queue = new RunQueue(4, -2);
        Injector injector = new Injector();
        List<Runnable> tasks = pushAll(queue, injector, 0, 8); // overflows at 4 and at 7
        assertEquals(
                List.of(tasks.get(0), tasks.get(1), tasks.get(4), tasks.get(2), tasks.get(3), tasks.get(7)),
                popAll(injector));
        assertEquals(List.of(tasks.get(5), tasks.get(6)), popAll(queue));
    }

    @ParameterizedTest(name = "{0} queued: steal returns task {1}, leaves {2} in dst and {3} in src")
    @CsvSource({"1, 0, 0, 0", "2, 0, 0, 1", "3, 1, 1, 1", "4, 1, 1, 2"})
    void stealTakesHalfRoundedUpReturnsTheNewestStolenAndLeavesTheRestInTheStealersQueue(
            int queued, int returned, int inDst, int leftInSrc) {
        for (int start : STARTS) {
            RunQueue src = new RunQueue(4, start);
            RunQueue dst = new RunQueue(4, ~start);
            Injector injector = new Injector();
            List<Runnable> tasks = pushAll(src, injector, 0, queued);

            assertSame(tasks.get(returned), src.stealInto(dst));
            assertEquals(inDst, dst.size());
            assertEquals(leftInSrc, src.size());
            assertEquals(tasks.subList(0, inDst), popAll(dst));
            assertEquals(tasks.subList(returned + 1, queued), popAll(src));
        }
    }

    @Test
    void stealFromAnEmptyQueueReturnsNull() {
        RunQueue src = new RunQueue(4);
        RunQueue dst = new RunQueue(4);
        assertNull(src.stealInto(dst));
        Injector injector = new Injector();
        pushAll(src, injector, 0, 2);
        popAll(src);
        assertNull(src.stealInto(dst));
        assertTrue(dst.isEmpty());
    }

    @Test
    void stealTakesNoMoreThanTheDestinationHasRoomFor() {
        Injector injector = new Injector();
        RunQueue src = new RunQueue(8);
        List<Runnable> tasks = pushAll(src, injector, 0, 8);

        RunQueue full = new RunQueue(2);
        pushAll(full, injector, 100, 2);
        assertNull(src.stealInto(full));
        assertEquals(8, src.size());

        RunQueue oneFree = new RunQueue(2);
        pushAll(oneFree, injector, 200, 1);
        assertSame(tasks.get(0), src.stealInto(oneFree)); // room for 1 although 4 would be half
        assertEquals(1, oneFree.size());
        assertEquals(7, src.size());
        assertTrue(injector.isEmpty());
    }

    @Test
    void stealIntoItselfIsRejected() {
        RunQueue queue = new RunQueue(4);
        assertThrows(IllegalArgumentException.class, () -> queue.stealInto(queue));
    }

    @Test
    void drainToMovesEveryQueuedTaskOldestFirst() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, start);
            Injector injector = new Injector();
            List<Runnable> tasks = pushAll(queue, injector, 0, 3);
            queue.pop();
            assertEquals(2, queue.drainTo(injector));
            assertTrue(queue.isEmpty());
            assertEquals(tasks.subList(1, 3), popAll(injector));
            assertEquals(0, queue.drainTo(injector));
            assertTrue(injector.isEmpty());
        }
    }

    @Test
    void manyMoreCyclesThanTheCapacityKeepOrderAndCountsAcrossTheCounterWrap() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, start);
            RunQueue thief = new RunQueue(4, start + 1);
            Injector injector = new Injector();
            int next = 0;
            int expected = 0;
            // Each round pushes 3 and pops 3, so positions advance 3 per round: 100 rounds go
            // around the ring 75 times and, from the start near 2^32 or 2^31, across the wrap.
            for (int round = 0; round < 100; round++) {
                for (int i = 0; i < 3; i++) {
                    queue.push(new Numbered(next++), injector);
                }
                assertEquals(3, queue.size());
                for (int i = 0; i < 3; i++) {
                    assertEquals(new Numbered(expected++), queue.pop());
                }
                assertNull(queue.pop());
            }
            // Steal and overflow right at the wrapped positions too.
            List<Runnable> tasks = pushAll(queue, injector, 1000, 4);
            assertSame(tasks.get(1), queue.stealInto(thief));
            assertEquals(List.of(tasks.get(0)), popAll(thief));
            List<Runnable> more = pushAll(queue, injector, 2000, 3);
            assertEquals(List.of(tasks.get(2), tasks.get(3), more.get(2)), popAll(injector));
            assertEquals(List.of(more.get(0), more.get(1)), popAll(queue));
        }
    }

    @Test
    void countersStartedJustBelowTheUnsignedWrapBehaveAsFromZero() {
        RunQueue queue = new RunQueue(4, -1);
        Injector injector = new Injector();
        List<Runnable> tasks = pushAll(queue, injector, 0, 4); // positions 2^32 - 1, 0, 1, 2
        assertEquals(4, queue.size());
        assertEquals("RunQueue[steal=4294967295, real=4294967295, tail=3, capacity=4]", queue.toString());
        assertSame(tasks.get(0), queue.pop());
        assertEquals("RunQueue[steal=0, real=0, tail=3, capacity=4]", queue.toString());
        assertEquals(tasks.subList(1, 4), popAll(queue));
    }

    /**
     * Every sequence of 6 single-threaded operations, from every start index, against a model:
     * each result and size must match, and every task must end up exactly once in a pop, a
     * steal, the stealer's queue or the injector.
     */
    @Test
    void everySequenceOfOperationsMatchesTheModelAndConservesTasks() {
        enum Op {
            PUSH,
            POP,
            STEAL,
            THIEF_POP
        }
        Op[] ops = Op.values();
        int length = 6;
        int sequences = (int) Math.pow(ops.length, length);
        for (int fill = 0; fill <= 4; fill++) {
            for (int start : STARTS) {
                for (int code = 0; code < sequences; code++) {
                    RunQueue src = new RunQueue(4, start);
                    RunQueue thief = new RunQueue(4, start ^ 0x5555);
                    Injector injector = new Injector();
                    ArrayDeque<Runnable> modelSrc = new ArrayDeque<>();
                    ArrayDeque<Runnable> modelThief = new ArrayDeque<>();
                    ArrayDeque<Runnable> modelInjector = new ArrayDeque<>();
                    List<Runnable> taken = new ArrayList<>();
                    int next = 0;
                    StringBuilder trace = new StringBuilder("fill " + fill + ", start " + start + ":");

                    for (int step = -fill, c = code; step < length; step++) {
                        Op op = step < 0 ? Op.PUSH : ops[c % ops.length];
                        if (step >= 0) {
                            c /= ops.length;
                        }
                        trace.append(' ').append(op);
                        switch (op) {
                            case PUSH -> {
                                Runnable task = new Numbered(next++);
                                src.push(task, injector);
                                if (modelSrc.size() == 4) {
                                    modelInjector.add(modelSrc.poll());
                                    modelInjector.add(modelSrc.poll());
                                    modelInjector.add(task);
                                } else {
                                    modelSrc.add(task);
                                }
                            }
                            case POP -> {
                                Runnable task = src.pop();
                                assertSame(modelSrc.poll(), task, trace::toString);
                                if (task != null) {
                                    taken.add(task);
                                }
                            }
                            case STEAL -> {
                                Runnable task = src.stealInto(thief);
                                int room = 4 - modelThief.size();
                                int n = Math.min(modelSrc.size() - modelSrc.size() / 2, room);
                                for (int i = 0; i < n - 1; i++) {
                                    modelThief.add(modelSrc.poll());
                                }
                                assertSame(n == 0 ? null : modelSrc.poll(), task, trace::toString);
                                if (task != null) {
                                    taken.add(task);
                                }
                            }
                            case THIEF_POP -> {
                                Runnable task = thief.pop();
                                assertSame(modelThief.poll(), task, trace::toString);
                                if (task != null) {
                                    taken.add(task);
                                }
                            }
                        }
                        assertEquals(modelSrc.size(), src.size(), trace::toString);
                        assertEquals(modelThief.size(), thief.size(), trace::toString);
                        assertEquals(modelInjector.size(), injector.size(), trace::toString);
                    }

                    assertEquals(List.copyOf(modelSrc), popAll(src), trace::toString);
                    assertEquals(List.copyOf(modelThief), popAll(thief), trace::toString);
                    assertEquals(List.copyOf(modelInjector), popAll(injector), trace::toString);
                    taken.addAll(modelSrc);
                    taken.addAll(modelThief);
                    taken.addAll(modelInjector);
                    boolean[] seen = new boolean[next];
                    for (Runnable task : taken) {
                        int id = ((Numbered) task).id();
                        assertFalse(seen[id], () -> "task " + id + " twice: " + trace);
                        seen[id] = true;
                    }
                    assertEquals(next, taken.size(), trace::toString);
                }
            }
        }
    }

    /** How the owner interleaves its pushes and pops in the stress test. */
    enum OwnerPattern {
        /** Push three, pop one: the queue stays full, overflows, and stealers always find work. */
        STEADY,
        /**
         * Bursts of 1 to capacity + 2 pushes, then of 0 to capacity / 2 + 1 pops (a fixed
         * xorshift sequence): the queue swings between full and empty while stealers claim.
         */
        BURSTS
    }

    /**
     * The owner pushes and pops 200,000 tasks (and removes some with popIfHead, as a helper does)
     * while stealers steal into their own queues and pop them; the owner's queue grows (where its
     * maximum exceeds its first length), then overflows into the injector. Every task must be
     * taken exactly once.
     */
    @ParameterizedTest(name = "{0}, {1} stealers, capacity {2} growing to {3}")
    @CsvSource({
        "STEADY, 1, 4, 4", "STEADY, 2, 4, 4", "STEADY, 3, 4, 4", "STEADY, 2, 256, 256", "STEADY, 3, 256, 256",
        "BURSTS, 1, 4, 4", "BURSTS, 2, 4, 4", "BURSTS, 3, 4, 4", "BURSTS, 2, 256, 256", "BURSTS, 3, 256, 256",
        "STEADY, 2, 2, 4096", "STEADY, 3, 4, 65536", "BURSTS, 2, 2, 64", "BURSTS, 3, 4, 1024"
    })
    void ownerAndConcurrentStealersTakeEveryTaskExactlyOnce(
            OwnerPattern pattern, int stealers, int capacity, int maxCapacity) throws Exception {
        int total = 200_000;
        RunQueue owner = new RunQueue(capacity, maxCapacity, -capacity * 100);
        Injector injector = new Injector();
        AtomicIntegerArray seen = new AtomicIntegerArray(total);
        AtomicBoolean ownerDone = new AtomicBoolean();
        AtomicInteger headRemovals = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        Runnable[] tasks = numbered(total);
        List<Thread> threads = new ArrayList<>();

        threads.add(InjectorTest.platform("owner", failure, start, () -> {
            int random = 0x9E3779B9;
            int pushed = 0;
            int oldestKept = 0; // no task below it is still queued: the owner took it, or a stealer did
            while (pushed < total) {
                random ^= random << 13;
                random ^= random >>> 17;
                random ^= random << 5;
                int pushes = switch (pattern) {
                    case STEADY -> 3;
                    case BURSTS -> 1 + (random & 0xFF) % (capacity + 2);
                };
                int pops = switch (pattern) {
                    case STEADY -> 1;
                    case BURSTS -> ((random >>> 8) & 0xFF) % (capacity / 2 + 2);
                };
                for (int i = 0; i < pushes && pushed < total; i++) {
                    owner.push(tasks[pushed++], injector);
                }
                for (int i = 0; i < pops; i++) {
                    if (((random >>> i) & 3) == 0) {
                        // popIfHead of the oldest task the owner has not taken itself, or the one
                        // after it (never the head): a true answer takes it, as a helper's does
                        int candidate = oldestKept + ((random >>> (i + 8)) & 1);
                        if (candidate < pushed && owner.popIfHead(tasks[candidate])) {
                            take(tasks[candidate], seen);
                            oldestKept = candidate + 1;
                            headRemovals.incrementAndGet();
                        }
                    } else {
                        Runnable task = owner.pop();
                        if (task != null) {
                            oldestKept = Math.max(oldestKept, ((Numbered) task).id() + 1);
                        }
                        take(task, seen);
                    }
                }
            }
            Runnable task = owner.pop();
            while (task != null) {
                take(task, seen);
                task = owner.pop();
            }
            ownerDone.set(true);
        }));
        List<RunQueue> stealerQueues = new ArrayList<>();
        for (int s = 0; s < stealers; s++) {
            RunQueue mine = new RunQueue(capacity, s * 7);
            stealerQueues.add(mine);
            threads.add(stealer("stealer-" + s, owner, mine, ownerDone, seen, failure, start));
        }
        runAndTakeOverflow(threads, start, failure, injector, seen);
        assertTrue(owner.isEmpty());
        for (RunQueue queue : stealerQueues) {
            assertTrue(queue.isEmpty());
        }
        for (int i = 0; i < total; i++) {
            assertEquals(1, seen.get(i), "times task " + i + " was taken");
        }
        assertTrue(headRemovals.get() > 0, "popIfHead never removed a task: the mix did not exercise it");
    }

    /**
     * Growing while a stealer steals: 3,000 fresh queues, each starting with 2 slots and growing to
     * 64 as its owner pushes 64 tasks (popping one every fourth push), while a stealer steals from
     * whichever queue is current. Five doublings per queue, each racing the stealer's claims and
     * copies: every task must be taken exactly once (a stealer reading a ring that lacks a position
     * it claimed takes a stale task twice or a null).
     */
    @Test
    void growingWhileAStealerStealsTakesEveryTaskExactlyOnce() throws Exception {
        int rounds = 3_000;
        int perRound = 64;
        AtomicIntegerArray seen = new AtomicIntegerArray(rounds * perRound);
        AtomicReference<RunQueue> current = new AtomicReference<>();
        AtomicBoolean ownerDone = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        Injector injector = new Injector();
        Thread owner = InjectorTest.platform("owner", failure, start, () -> {
            for (int r = 0; r < rounds && failure.get() == null; r++) {
                RunQueue queue = new RunQueue(2, perRound, r * 31);
                current.set(queue);
                for (int i = 0; i < perRound; i++) {
                    queue.push(new Numbered(r * perRound + i), injector);
                    if (i % 4 == 3) {
                        take(queue.pop(), seen);
                    }
                }
                assertEquals(0, injector.size(), "a ring that may grow to hold every task never overflows");
                for (Runnable task = queue.pop(); task != null; task = queue.pop()) {
                    take(task, seen);
                }
            }
            ownerDone.set(true);
        });
        Thread stealer = InjectorTest.platform("stealer", failure, start, () -> {
            RunQueue mine = new RunQueue(perRound);
            while (!ownerDone.get() && failure.get() == null) {
                RunQueue queue = current.get();
                Runnable task = queue == null ? null : queue.stealInto(mine);
                if (task == null) {
                    Thread.onSpinWait();
                    continue;
                }
                take(task, seen);
                for (Runnable local = mine.pop(); local != null; local = mine.pop()) {
                    take(local, seen);
                }
            }
        });
        start.countDown();
        assertTrue(owner.join(Duration.ofSeconds(50)), "the owner did not finish");
        assertTrue(stealer.join(Duration.ofSeconds(50)), "the stealer did not finish");
        if (failure.get() != null) {
            throw new AssertionError("a thread failed", failure.get());
        }
        for (int i = 0; i < rounds * perRound; i++) {
            assertEquals(1, seen.get(i), "times task " + i + " was taken");
        }
    }

    @Test
    void aFullRingBelowItsMaximumDoublesInsteadOfOverflowingAndKeepsTheOrder() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(2, 16, start);
            Injector injector = new Injector();
            List<Runnable> pushed = pushAll(queue, injector, 0, 3);
            assertEquals(4, queue.capacity(), "grew once, start " + start);
            assertEquals(0, ((Numbered) queue.pop()).id(), "start " + start);
            pushed.addAll(pushAll(queue, injector, 3, 13)); // 15 queued: grows to 8, then 16
            assertEquals(16, queue.capacity());
            assertEquals(15, queue.size());
            assertEquals(0, injector.size(), "nothing overflowed below the maximum");
            assertEquals(pushed.subList(1, 16), popAll(queue));
        }
    }

    /**
     * roomFor grows the ring before a worker takes a batch from the Injector, so a full ring below
     * its maximum still takes the whole batch (with the ring's room as it was, a worker whose
     * ring stayed exactly full would take one task a look); at the maximum it says what is free,
     * and a pushAll of that many neither grows nor overflows.
     */
    @Test
    void roomForGrowsTheRingUpToItsMaximumAndSaysWhatAPushAllTakesWithoutOverflowing() {
        for (int start : STARTS) {
            RunQueue queue = new RunQueue(4, 16, start);
            Injector injector = new Injector();
            List<Runnable> pushed = pushAll(queue, injector, 0, 4);
            assertEquals(4, queue.capacity(), "full, start " + start);
            assertEquals(4, queue.roomFor(3), "grew once for 3 more, start " + start);
            assertEquals(8, queue.capacity());
            assertEquals(12, queue.roomFor(12), "grew to its maximum, start " + start);
            assertEquals(16, queue.capacity());
            assertEquals(12, queue.roomFor(20), "at its maximum: what is free");
            Runnable[] more = new Runnable[12];
            for (int i = 0; i < more.length; i++) {
                more[i] = new Numbered(4 + i);
                pushed.add(more[i]);
            }
            queue.pushAll(more, 0, more.length, injector);
            assertEquals(0, queue.roomFor(1));
            assertEquals(0, injector.size(), "nothing overflowed, start " + start);
            assertEquals(pushed, popAll(queue));
        }
    }

    @Test
    void aFullRingAtItsMaximumOverflowsAsAFixedOneDoes() {
        RunQueue queue = RunQueue.growing(2, 4);
        Injector injector = new Injector();
        List<Runnable> tasks = pushAll(queue, injector, 0, 5); // grows to 4 at the third, overflows at the fifth
        assertEquals(4, queue.capacity());
        assertEquals(List.of(tasks.get(0), tasks.get(1), tasks.get(4)), popAll(injector));
        assertEquals(List.of(tasks.get(2), tasks.get(3)), popAll(queue));
    }

    /** A sweeper for tests: the tasks whose ids are marked are dead; it records what it was asked and what was dropped. */
    private static final class MarkedDead implements RunQueue.Sweeper {
        final AtomicIntegerArray dead;
        final List<Integer> asked = new ArrayList<>();
        final List<Runnable> dropped = new ArrayList<>();

        MarkedDead(int ids) {
            dead = new AtomicIntegerArray(ids);
        }

        void kill(Runnable task) {
            dead.set(((Numbered) task).id(), 1);
        }

        @Override
        public boolean isDead(Runnable task) {
            asked.add(((Numbered) task).id());
            return dead.get(((Numbered) task).id()) == 1;
        }

        @Override
        public void dropped(Runnable task) {
            if (dead.get(((Numbered) task).id()) != 1) {
                throw new AssertionError("dropped " + task + ", which is not dead");
            }
            dropped.add(task);
        }
    }

    /** A swept queue of ring length 4 (growing to {@code maxCapacity}) holding {@code queued} tasks, the oldest two dead. */
    private record DeadOldest(MarkedDead sweeper, RunQueue queue, Injector injector, List<Runnable> tasks) {
        static DeadOldest queue(int start, int maxCapacity, int queued) {
            MarkedDead sweeper = new MarkedDead(16);
            RunQueue queue = new RunQueue(4, maxCapacity, start, sweeper);
            Injector injector = new Injector();
            List<Runnable> tasks = pushAll(queue, injector, 0, queued);
            sweeper.kill(tasks.get(0));
            sweeper.kill(tasks.get(1));
            return new DeadOldest(sweeper, queue, injector, tasks);
        }
    }

    @Test
    void aFullRingDropsItsDeadOldestEntriesInsteadOfGrowingOrOverflowing() {
        for (int start : STARTS) {
            DeadOldest full = DeadOldest.queue(start, 4, 4);
            MarkedDead sweeper = full.sweeper();
            RunQueue queue = full.queue();
            Injector injector = full.injector();
            List<Runnable> tasks = full.tasks();
            sweeper.kill(tasks.get(3)); // dead, but behind a live one: stays until taken
            assertEquals(List.of(), sweeper.asked, "a ring with room asks nothing, start " + start);
            tasks.addAll(pushAll(queue, injector, 4, 1));
            assertEquals(List.of(tasks.get(0), tasks.get(1)), sweeper.dropped, "start " + start);
            assertEquals(List.of(0, 1, 2), sweeper.asked, "it stops at the first live entry");
            assertEquals(0, injector.size(), "nothing overflowed, start " + start);
            assertEquals(List.of(tasks.get(2), tasks.get(3), tasks.get(4)), popAll(queue));
        }
    }

    @Test
    void aBatchThatDoesNotFitDropsTheDeadOldestEntriesBeforeTheRingGrows() {
        for (int start : STARTS) {
            DeadOldest q = DeadOldest.queue(start, 8, 3);
            Runnable[] batch = {new Numbered(3), new Numbered(4)};
            q.queue().pushAll(batch, 0, 2, q.injector()); // 5 would not fit in 4: the two dead ones go instead
            assertEquals(List.of(q.tasks().get(0), q.tasks().get(1)), q.sweeper().dropped, "start " + start);
            assertEquals(4, q.queue().capacity(), "it did not grow, start " + start);
            assertEquals(0, q.injector().size());
            assertEquals(List.of(q.tasks().get(2), batch[0], batch[1]), popAll(q.queue()));
        }
    }

    @Test
    void aFullRingWhoseOldestEntryIsLiveGrowsOrOverflowsAsBefore() {
        MarkedDead sweeper = new MarkedDead(16);
        RunQueue queue = new RunQueue(2, 4, 0, sweeper);
        Injector injector = new Injector();
        List<Runnable> tasks = pushAll(queue, injector, 0, 2);
        sweeper.kill(tasks.get(1));
        tasks.addAll(pushAll(queue, injector, 2, 3)); // grows to 4 at the third, overflows at the fifth
        assertEquals(4, queue.capacity());
        assertEquals(List.of(), sweeper.dropped);
        assertEquals(List.of(0, 0), sweeper.asked, "asked once per full ring, about the oldest only");
        assertEquals(List.of(tasks.get(0), tasks.get(1), tasks.get(4)), popAll(injector));
        assertEquals(List.of(tasks.get(2), tasks.get(3)), popAll(queue));
    }

    /**
     * Sweeps racing stealers: the owner pushes bursts that fill the ring, kills most of what it
     * pushed (as a helper that runs its newest spawns in place does) and seldom pops, while
     * stealers steal. Every entry must leave the queue exactly once (popped, stolen, overflowed
     * or dropped), no live entry may be dropped, and sweeps must have happened.
     */
    @ParameterizedTest(name = "{0} stealers, capacity {1} growing to {2}")
    @CsvSource({"1, 4, 4", "2, 4, 4", "3, 8, 8", "2, 2, 64", "3, 4, 1024"})
    void sweepsRacingStealersDropOnlyDeadEntriesAndEachEntryLeavesOnce(int stealers, int capacity, int maxCapacity)
            throws Exception {
        int total = 200_000;
        AtomicIntegerArray seen = new AtomicIntegerArray(total);
        AtomicIntegerArray dead = new AtomicIntegerArray(total);
        AtomicInteger drops = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        RunQueue owner = new RunQueue(capacity, maxCapacity, -capacity * 100, new RunQueue.Sweeper() {
            @Override
            public boolean isDead(Runnable task) {
                return dead.get(((Numbered) task).id()) == 1;
            }

            @Override
            public void dropped(Runnable task) {
                if (dead.get(((Numbered) task).id()) != 1) {
                    throw new AssertionError("dropped " + task + ", which is not dead");
                }
                drops.incrementAndGet();
                take(task, seen);
            }
        });
        Injector injector = new Injector();
        AtomicBoolean ownerDone = new AtomicBoolean();
        CountDownLatch start = new CountDownLatch(1);
        Runnable[] tasks = numbered(total);
        List<Thread> threads = new ArrayList<>();
        threads.add(InjectorTest.platform("owner", failure, start, () -> {
            int random = 0x2545F491;
            int pushed = 0;
            while (pushed < total) {
                random ^= random << 13;
                random ^= random >>> 17;
                random ^= random << 5;
                int burst = 1 + (random & 0xFF) % (capacity + 2);
                for (int i = 0; i < burst && pushed < total; i++) {
                    owner.push(tasks[pushed], injector);
                    if (((random >>> (i + 8)) & 3) != 0) {
                        dead.set(pushed, 1); // dead for good once marked, as a claimed job is
                    }
                    pushed++;
                }
                if (((random >>> 20) & 7) == 0) {
                    take(owner.pop(), seen);
                }
            }
            for (Runnable task = owner.pop(); task != null; task = owner.pop()) {
                take(task, seen);
            }
            ownerDone.set(true);
        }));
        for (int s = 0; s < stealers; s++) {
            threads.add(
                    stealer("stealer-" + s, owner, new RunQueue(maxCapacity, s * 7), ownerDone, seen, failure, start));
        }
        runAndTakeOverflow(threads, start, failure, injector, seen);
        for (int i = 0; i < total; i++) {
            assertEquals(1, seen.get(i), "times entry " + i + " left the queue");
        }
        assertTrue(drops.get() > 0, "no sweep dropped anything: the mix did not exercise it");
    }

    @ParameterizedTest
    @CsvSource({"4, 2", "4, 6", "4, 2147483647", "2, -8"})
    void rejectsAMaximumBelowTheFirstLengthOrNotAPowerOfTwo(int capacity, int maxCapacity) {
        assertThrows(IllegalArgumentException.class, () -> RunQueue.growing(capacity, maxCapacity));
    }

    /**
     * A stealer: steals from {@code owner} into {@code mine} and takes what it stole, until the
     * owner is done and its queue empty. It reads ownerDone before looking at the queue: once the
     * owner is done, an empty queue stays empty.
     */
    private static Thread stealer(
            String name,
            RunQueue owner,
            RunQueue mine,
            AtomicBoolean ownerDone,
            AtomicIntegerArray seen,
            AtomicReference<Throwable> failure,
            CountDownLatch start) {
        return InjectorTest.platform(name, failure, start, () -> {
            boolean done = ownerDone.get();
            while (!(done && owner.isEmpty()) && failure.get() == null) {
                Runnable task = owner.stealInto(mine);
                if (task == null) {
                    Thread.onSpinWait();
                } else {
                    take(task, seen);
                    for (Runnable local = mine.pop(); local != null; local = mine.pop()) {
                        take(local, seen);
                    }
                }
                done = ownerDone.get();
            }
        });
    }

    /** Starts the threads, waits for them, rethrows a failure of theirs (InjectorTest.runAll), then takes what overflowed. */
    private static void runAndTakeOverflow(
            List<Thread> threads,
            CountDownLatch start,
            AtomicReference<Throwable> failure,
            Injector injector,
            AtomicIntegerArray seen)
            throws InterruptedException {
        InjectorTest.runAll(threads, failure, start);
        for (Runnable task : popAll(injector)) {
            take(task, seen);
        }
    }

    /** Tasks numbered 0 to {@code total - 1}. */
    private static Runnable[] numbered(int total) {
        Runnable[] numbered = new Runnable[total];
        Arrays.setAll(numbered, Numbered::new);
        return numbered;
    }

    private static void take(Runnable task, AtomicIntegerArray seen) {
        if (task == null) {
            return;
        }
        int times = seen.incrementAndGet(((Numbered) task).id());
        if (times != 1) {
            throw new AssertionError("task " + task + " taken " + times + " times");
        }
    }
}
