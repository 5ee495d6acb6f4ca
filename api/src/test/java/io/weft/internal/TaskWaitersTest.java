package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The awaiter stack: push, deregister (head, middle, tail), run once on completion. */
class TaskWaitersTest {
    private static final int STACK = 6;
    private static final Duration JOIN = Duration.ofSeconds(20);

    @Test
    void addingAWaiterAfterCompletionIsRefusedAndItsActionNeverRuns() {
        Task<String> task = Task.of(Future.completed("done"), "task");
        AtomicInteger runs = new AtomicInteger();

        assertNull(task.addWaiter(runs::incrementAndGet));
        assertEquals(0, runs.get());
        assertEquals(0, task.waiterCount());
    }

    @Test
    void completingRunsEachLiveWaiterExactlyOnceAndEmptiesTheStack() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> task = pending(stage);
        AtomicIntegerArray runs = new AtomicIntegerArray(STACK);
        for (int i = 0; i < STACK; i++) {
            int k = i;
            assertNotNull(task.addWaiter(() -> runs.incrementAndGet(k)));
        }
        assertEquals(STACK, task.waiterCount());

        stage.complete("done");

        for (int i = 0; i < STACK; i++) {
            assertEquals(1, runs.get(i), "waiter " + i);
        }
        assertEquals(0, task.waiterCount());
    }

    /**
     * A waiter's action that throws goes to the completing thread's uncaught-exception handler and
     * the other waiters still run. That handler may throw as well (a handler that prints, when the
     * heap is full, throws OutOfMemoryError): that used to leave every waiter after the failing one
     * asleep for good, and end the completing thread (a worker of a FiberIo) with it.
     */
    @Test
    void aThrowingActionWhoseReportThrowsTooLeavesNoOtherWaiterAsleep() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> task = pending(stage);
        AtomicIntegerArray runs = new AtomicIntegerArray(STACK);
        for (int i = 0; i < STACK; i++) {
            int k = i;
            assertNotNull(task.addWaiter(() -> {
                runs.incrementAndGet(k);
                if (k % 2 == 0) {
                    throw new IllegalStateException("action " + k + " fails (test)");
                }
            }));
        }
        AtomicInteger reports = new AtomicInteger();
        Thread self = Thread.currentThread();
        Thread.UncaughtExceptionHandler own = self.getUncaughtExceptionHandler();
        self.setUncaughtExceptionHandler((thread, e) -> {
            reports.incrementAndGet();
            throw new OutOfMemoryError("no memory to print the report (test)");
        });
        try {
            stage.complete("done"); // the waiters run here, on this thread
        } finally {
            self.setUncaughtExceptionHandler(own);
        }

        for (int i = 0; i < STACK; i++) {
            assertEquals(1, runs.get(i), "waiter " + i);
        }
        assertEquals(STACK / 2, reports.get(), "each failing action reported once");
        assertEquals(0, task.waiterCount());
    }

    /**
     * A parked await's wake-up whose Io's ready throws (with the heap full, the JVM throws
     * OutOfMemoryError where no allocation is written: a deoptimization that reallocates) is tried
     * again: the completer took the action, so nobody else would ever run it, and the awaiter,
     * which waits for its token and not for the task, used to stay parked for good. Nothing is
     * reported when the second try goes through.
     */
    @Test
    void aParkedAwaitsWakeUpThatThrowsIsTriedAgainAndTheAwaiterWakes() throws InterruptedException {
        ReadyFailsOnceIo io = new ReadyFailsOnceIo();
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> awaited = pending(stage);
        Task<String> awaiter = io.async(awaited::await);
        Thread thread = io.runNextOnNewThread("awaiter");
        DeferredIo.awaitParkedOnToken(thread);
        AtomicInteger reports = new AtomicInteger();
        Thread self = Thread.currentThread();
        Thread.UncaughtExceptionHandler own = self.getUncaughtExceptionHandler();
        self.setUncaughtExceptionHandler((t, e) -> reports.incrementAndGet());
        try {
            stage.complete("done"); // the waiters run here, on this thread
        } finally {
            self.setUncaughtExceptionHandler(own);
        }

        thread.join(JOIN);
        assertFalse(thread.isAlive(), "the awaiter woke");
        assertEquals("done", awaiter.resultNow());
        assertEquals(2, io.readies.get(), "the first ready threw, the second went through");
        assertEquals(0, reports.get(), "a wake-up that went through when tried again is not reported");
    }

    /**
     * A race's entrant is a wake-up too: the one whose ready throws is tried again, and the racer
     * wakes with the winner.
     */
    @Test
    void aRacesWakeUpThatThrowsIsTriedAgainAndTheRacerWakes() throws InterruptedException {
        ReadyFailsOnceIo io = new ReadyFailsOnceIo();
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> second = new CompletableFuture<>();
        Task<String> racer = io.async(() -> Io.race(Future.from(first), Future.from(second)));
        Thread thread = io.runNextOnNewThread("racer");
        DeferredIo.awaitParkedOnToken(thread);

        second.complete("second");

        thread.join(JOIN);
        assertFalse(thread.isAlive(), "the racer woke");
        assertEquals("second", racer.resultNow());
        assertEquals(2, io.readies.get(), "the first ready threw, the second went through");
    }

    /** A DeferredIo whose first ready throws before it readies anything, as the JVM may. */
    private static final class ReadyFailsOnceIo extends DeferredIo {
        final AtomicInteger readies = new AtomicInteger();

        @Override
        public void ready(ParkToken park) {
            if (readies.incrementAndGet() == 1) {
                throw new OutOfMemoryError("a ready that fails before it readies (test)");
            }
            super.ready(park);
        }
    }

    @Test
    void removingTheHeadWaiterLeavesExactlyTheOthers() {
        assertRemovalLeavesExactlyTheLiveWaiters(List.of(STACK - 1)); // the newest is the head
    }

    @Test
    void removingAMiddleWaiterLeavesExactlyTheOthers() {
        assertRemovalLeavesExactlyTheLiveWaiters(List.of(STACK / 2));
    }

    @Test
    void removingTheTailWaiterLeavesExactlyTheOthers() {
        assertRemovalLeavesExactlyTheLiveWaiters(List.of(0)); // the oldest is the tail
    }

    @Test
    void removingEveryWaiterLeavesNone() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> task = pending(stage);
        List<Task.Waiter> nodes = new ArrayList<>();
        AtomicInteger runs = new AtomicInteger();
        for (int i = 0; i < STACK; i++) {
            nodes.add(task.addWaiter(runs::incrementAndGet));
        }
        nodes.forEach(task::removeWaiter);

        assertEquals(0, task.waiterCount());
        assertFalse(task.toString().contains("waiters"), task.toString());
        stage.complete("done");
        assertEquals(0, runs.get());
    }

    static IntStream everySubsetOfTheStack() {
        return IntStream.range(0, 1 << STACK);
    }

    @ParameterizedTest(name = "removed set {0} (bit i = i-th waiter added)")
    @MethodSource("everySubsetOfTheStack")
    void removingAnySubsetOfWaitersInAnyOrderLeavesExactlyTheLiveOnes(int removedMask) {
        List<Integer> oldestFirst = new ArrayList<>();
        for (int i = 0; i < STACK; i++) {
            if ((removedMask & (1 << i)) != 0) {
                oldestFirst.add(i);
            }
        }
        assertRemovalLeavesExactlyTheLiveWaiters(oldestFirst);
        assertRemovalLeavesExactlyTheLiveWaiters(oldestFirst.reversed());
    }

    @Test
    void removingAWaiterTwiceNullOrAfterCompletionIsHarmless() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> task = pending(stage);
        AtomicInteger kept = new AtomicInteger();
        AtomicInteger removed = new AtomicInteger();
        Task.Waiter keep = task.addWaiter(kept::incrementAndGet);
        Task.Waiter gone = task.addWaiter(removed::incrementAndGet);

        task.removeWaiter(gone);
        task.removeWaiter(gone);
        task.removeWaiter(null);
        assertEquals(1, task.waiterCount());
        stage.complete("done");
        task.removeWaiter(keep);

        assertEquals(1, kept.get());
        assertEquals(0, removed.get());
    }

    @Test
    void concurrentAddsAndRemovesNeverLoseALiveWaiter() throws Exception {
        int threads = 4;
        int perThread = 5_000;
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> task = pending(stage);
        AtomicIntegerArray runs = new AtomicIntegerArray(threads * perThread);
        boolean[] kept = new boolean[threads * perThread]; // each thread writes its own slice
        CyclicBarrier start = new CyclicBarrier(threads);
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t * perThread;
            workers.add(Thread.ofPlatform().name("churn-" + t).start(() -> {
                try {
                    start.await();
                    for (int id = first; id < first + perThread; id++) {
                        int k = id;
                        Task.Waiter node = task.addWaiter(() -> runs.incrementAndGet(k));
                        // Keep one in 7; remove the rest at once, so removals race each other.
                        if (id % 7 == 0) {
                            kept[id] = true;
                        } else {
                            task.removeWaiter(node);
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }));
        }
        for (Thread w : workers) {
            assertTrue(w.join(JOIN), "worker stuck");
        }
        assertEquals(List.of(), List.copyOf(errors));

        int keptCount = 0;
        for (boolean k : kept) {
            keptCount += k ? 1 : 0;
        }
        assertEquals(keptCount, task.waiterCount());
        stage.complete("done");
        for (int id = 0; id < kept.length; id++) {
            assertEquals(kept[id] ? 1 : 0, runs.get(id), "waiter " + id + (kept[id] ? " (kept)" : " (removed)"));
        }
    }

    @Test
    void aWaiterAddedWhileTheTaskCompletesIsEitherRefusedOrRunExactlyOnce() throws Exception {
        int adders = 3;
        int rounds = 200;
        int maxAddsPerAdder = 5_000; // bounds a round if the completer is descheduled
        for (int round = 0; round < rounds; round++) {
            CompletableFuture<String> stage = new CompletableFuture<>();
            Task<String> task = pending(stage);
            CyclicBarrier start = new CyclicBarrier(adders + 1);
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            List<List<AtomicInteger>> acceptedPerAdder = new ArrayList<>();
            List<Thread> workers = new ArrayList<>();
            AtomicInteger adds = new AtomicInteger();
            for (int a = 0; a < adders; a++) {
                List<AtomicInteger> accepted = new ArrayList<>(); // written by its adder, read after join
                acceptedPerAdder.add(accepted);
                workers.add(Thread.ofPlatform().name("adder-" + a).start(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < maxAddsPerAdder; i++) {
                            AtomicInteger runs = new AtomicInteger();
                            if (task.addWaiter(runs::incrementAndGet) == null) {
                                return; // refused: the task is done, the adder would report at once
                            }
                            accepted.add(runs);
                            adds.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            start.await();
            while (adds.get() < 20 && workers.stream().anyMatch(Thread::isAlive)) {
                Thread.onSpinWait(); // complete while the adders are pushing
            }
            stage.complete("done");
            for (Thread w : workers) {
                assertTrue(w.join(JOIN), "adder stuck");
            }
            assertEquals(List.of(), List.copyOf(errors));
            for (int a = 0; a < adders; a++) {
                List<AtomicInteger> accepted = acceptedPerAdder.get(a);
                for (int i = 0; i < accepted.size(); i++) {
                    assertEquals(
                            1, accepted.get(i).get(), "round " + round + ", adder " + a + ", accepted waiter " + i);
                }
            }
        }
    }

    /**
     * Adds {@link #STACK} waiters, removes {@code removed} (indexes in the order added, so
     * {@code STACK - 1} is the head) in the given order, then checks the count and, after
     * completion, that exactly the live actions ran, once each.
     */
    private static void assertRemovalLeavesExactlyTheLiveWaiters(List<Integer> removed) {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Task<String> task = pending(stage);
        AtomicIntegerArray runs = new AtomicIntegerArray(STACK);
        Task.Waiter[] nodes = new Task.Waiter[STACK];
        for (int i = 0; i < STACK; i++) {
            int k = i;
            nodes[i] = task.addWaiter(() -> runs.incrementAndGet(k));
        }

        removed.forEach(i -> task.removeWaiter(nodes[i]));
        assertEquals(STACK - removed.size(), task.waiterCount(), "removed " + removed);

        stage.complete("done");
        for (int i = 0; i < STACK; i++) {
            assertEquals(removed.contains(i) ? 0 : 1, runs.get(i), "waiter " + i + ", removed " + removed);
        }
    }

    private static Task<String> pending(CompletableFuture<String> stage) {
        return Task.of(Future.from(stage), "pending");
    }
}
