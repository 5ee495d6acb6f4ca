package io.weft.fiber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.internal.TaskProbe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Long runs that load FiberIo hard: a million fibers, a hundred thousand parked at once,
 * cancel-vs-complete races, create/close cycles. Tagged "stress": run with
 * {@code mvn -B -Pstress -pl fiber-io -am verify}. They print what they measured.
 */
@Tag("stress")
@Timeout(600)
class FiberIoStressTest {

    private static long skynet(long num, long size) {
        if (size == 1) {
            return num;
        }
        List<Future<Long>> children = new ArrayList<>(10);
        long childSize = size / 10;
        for (int i = 0; i < 10; i++) {
            long childNum = num + i * childSize;
            children.add(Io.async(() -> skynet(childNum, childSize)));
        }
        long sum = 0;
        for (Future<Long> child : children) {
            sum += child.await();
        }
        return sum;
    }

    @Test
    void skynetSpawnsAMillionFibersAndSumsThem() {
        try (FiberIo io = FiberIo.create()) {
            for (int round = 0; round < 3; round++) {
                long start = System.nanoTime();
                long sum = io.call(() -> skynet(0, 1_000_000));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertEquals(499_999_500_000L, sum);
                System.out.printf(
                        "skynet round %d: 1,111,111 fibers in %d ms on %d workers%n", round, ms, io.workers());
            }
            // The root's end is counted just after its caller wakes; every other task was awaited.
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> io.liveTasks() == 0);
        }
    }

    @Test
    void aHundredThousandFibersParkAtOnceAndAllWake() {
        int count = 100_000;
        CompletableFuture<Integer> gate = new CompletableFuture<>();
        Future<Integer> shared = Future.from(gate);
        try (FiberIo io = FiberIo.create()) {
            long before = usedHeap();
            List<Future<Integer>> parked = new ArrayList<>(count);
            Io.with(io).run(() -> {
                for (int i = 0; i < count; i++) {
                    parked.add(Io.async(() -> shared.await() + 1));
                }
            });
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofMinutes(2))
                    .until(() -> TaskProbe.waiterCount(shared) == count);
            long after = usedHeap();
            System.out.printf(
                    "FiberIo: %d parked fibers, about %d bytes of heap each%n", count, (after - before) / count);
            gate.complete(41);
            long sum = 0;
            for (Future<Integer> f : parked) {
                sum += Io.with(io).call(f::await);
            }
            assertEquals(42L * count, sum);
        }
        long before = usedHeap();
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofMinutes(2))
                .until(() -> threads.stream().allMatch(t -> t.getState() == Thread.State.WAITING));
        long after = usedHeap();
        System.out.printf(
                "JDK default-scheduler virtual threads: %d parked, about %d bytes of heap each%n",
                count, (after - before) / count);
        release.countDown();
    }

    private static long usedHeap() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    @Test
    void cancelRacingCompletionHasExactlyOneOutcome() {
        int rounds = 100_000;
        int[] cancelledCount = {0};
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            io.run(() -> {
                for (int i = 0; i < rounds; i++) {
                    int value = i;
                    Future<Integer> task = Io.async(() -> {
                        if ((value & 1) == 0) {
                            Thread.yield();
                        }
                        return value;
                    });
                    // The canceller takes the LIFO slot and pushes the task to the stealable queue,
                    // where the other worker may start it while the cancel is on its way.
                    Future<Boolean> canceller = Io.async(task::cancel);
                    boolean requested = canceller.await();
                    try {
                        int result = task.await();
                        assertEquals(value, result);
                        assertTrue(!requested, "cancel() returned true, yet the task succeeded");
                    } catch (Cancelled c) {
                        assertTrue(requested, "cancelled without a cancel request");
                        cancelledCount[0]++;
                    }
                }
            });
        }
        System.out.printf(
                "cancel vs complete: %d rounds, %d cancelled, %d completed%n",
                rounds, cancelledCount[0], rounds - cancelledCount[0]);
        assertTrue(cancelledCount[0] > 0, "no round was cancelled: the race was not exercised");
        assertTrue(cancelledCount[0] < rounds, "no round completed: the race was not exercised");
    }

    /**
     * A cancel of an awaiter racing the start of the task it runs in place (join helping): the
     * interrupt a cancel sends a running task reaches the task on top of the awaiter's stack, the
     * one in a blocking call, and is never lost. A task run in place is part of its awaiter, so
     * the awaiter's cancel interrupts it; what is left of it goes back to the awaiter once the
     * task ended. Three kinds of rounds:
     * <ul>
     *   <li>only the awaiter is cancelled, and the helped task spins: the awaiter, back from the
     *       await, spins until its cancel's interrupt arrives (one that has not after 10 s counts
     *       as lost), then enters a shield, which must absorb it (the task's record of the
     *       interrupt agrees with its thread);
     *   <li>only the awaiter is cancelled, and the helped task blocks in a latch's await: if it
     *       runs in place, the awaiter's cancel must interrupt it (10 s: a detector), wherever the
     *       cancel landed (before it started, as it starts, while it blocks); if it does not, the
     *       test cancels it once the awaiter ended;
     *   <li>the helped task, blocked in a latch's await, is cancelled right after its awaiter (as a
     *       closing FiberIo does): one of the two interrupts must reach it.
     * </ul>
     * The cancels come from a platform thread a varying delay (0 to 252 spins) after the awaiter is
     * about to await, so that they land at different points of the help; where each landed is not
     * measured, only that most children ran in place.
     */
    @Test
    void aCancelRacingAHelpReachesTheTaskOnTopAndIsNeverLost() {
        cancelRacingAHelp(100_000, NO_BUDGET);
    }

    /**
     * The race above, {@code rounds} times, or fewer (at least {@link #MIN_ROUNDS}) once {@code
     * budget} is spent (TasksBeforeThreadsTest runs a short one by default).
     */
    static void cancelRacingAHelp(int rounds, Duration budget) {
        // the child ran in place; it saw its awaiter's interrupt (spinning); the awaiter's was lost;
        // a shield saw it; the child blocked through a cancel (its awaiter's, or its own too)
        int[] outcomes = new int[5];
        long stopAt = System.nanoTime() + budget.toNanos();
        int done = 0;
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            for (int i = 0; moreRounds(i, rounds, stopAt) && outcomes[2] + outcomes[4] == 0; i++, done++) {
                int kind = i % 3; // 0: the child spins; 1: it blocks; 2: it blocks and is cancelled too
                boolean childBlocks = kind != 0;
                int delay = (i / 3) % 64;
                AtomicReference<Future<Boolean>> helped = new AtomicReference<>();
                AtomicBoolean aboutToAwait = new AtomicBoolean();
                boolean[] seen = new boolean[5]; // as outcomes, for this round
                Future<Object> awaiter = Io.with(io)
                        .call(() -> Io.async(() -> {
                            Thread awaiterThread = Thread.currentThread();
                            Future<Boolean> child = Io.async(() -> {
                                seen[0] = Thread.currentThread() == awaiterThread;
                                if (childBlocks) {
                                    // Never counted down: only a cancel's interrupt ends this (10 s: a detector)
                                    seen[4] = !new CountDownLatch(1).await(10, TimeUnit.SECONDS);
                                    return false;
                                }
                                boolean saw = false;
                                for (int k = 0; k < 16; k++) {
                                    saw |= Thread.currentThread().isInterrupted();
                                    Thread.onSpinWait();
                                }
                                return saw;
                            });
                            helped.set(child);
                            aboutToAwait.set(true);
                            seen[1] = child.await();
                            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                            while (!Thread.currentThread().isInterrupted()) { // the cancel's interrupt must come
                                if (System.nanoTime() - giveUp > 0) {
                                    seen[2] = true;
                                    return null;
                                }
                                Thread.onSpinWait();
                            }
                            seen[3] = Io.shield(() -> Thread.currentThread().isInterrupted());
                            return null;
                        }));
                cancelAfter(aboutToAwait, delay, awaiter);
                if (kind == 2) {
                    helped.get().cancel();
                }
                try {
                    awaiter.await();
                } catch (Cancelled expected) {
                    // the only outcome: at the await, or the value after the cancel is dropped
                }
                assertEquals(Future.State.CANCELLED, awaiter.state());
                if (kind == 1 && !helped.get().isDone()) {
                    helped.get().cancel(); // it did not run in place (it runs, or will, on its own)
                }
                try {
                    helped.get().await(); // done already if it ran in place; else it ran, or runs, on its own
                } catch (Cancelled expected) {
                    // cancelled itself, or through its awaiter while in place
                }
                for (int k = 0; k < seen.length; k++) {
                    outcomes[k] += seen[k] ? 1 : 0;
                }
            }
        }
        System.out.printf(
                "cancel vs help: %d rounds of %d, %d children ran in place; %d spinning ones saw their awaiter's"
                        + " interrupt, %d awaiters lost theirs, %d shields saw one, %d children blocked through a"
                        + " cancel%n",
                done, rounds, outcomes[0], outcomes[1], outcomes[2], outcomes[3], outcomes[4]);
        assertEquals(0, outcomes[2], "a cancel's interrupt never reached the awaiter");
        assertEquals(0, outcomes[3], "a shield saw a cancel's interrupt: the task's record of it was lost");
        assertEquals(0, outcomes[4], "a cancel did not interrupt the blocked task on top of the stack");
        assertTrue(outcomes[0] > done / 2, "few children ran in place: the race was not exercised");
    }

    /**
     * A cancel of an awaiter racing the start of the task it runs in place: however the two
     * interleave, the helped task's checkpoints see the cancel (CancelCheck, "The check's fast path": the
     * canceller marks the task above, or the task starting above reads the cancel), so it unwinds
     * instead of computing on after its awaiter was cancelled.
     */
    @Test
    void aCancelRacingTheStartOfAHelpIsSeenAtTheHelpedTasksCheckpoints() {
        cancelRacingTheStartOfAHelp(100_000, NO_BUDGET);
    }

    /**
     * The race above, {@code rounds} times, or fewer (at least {@link #MIN_ROUNDS}) once {@code
     * budget} is spent (TasksBeforeThreadsTest runs a short one by default).
     */
    static void cancelRacingTheStartOfAHelp(int rounds, Duration budget) {
        int ranInPlace = 0;
        int missed = 0;
        long stopAt = System.nanoTime() + budget.toNanos();
        int done = 0;
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            for (int i = 0; moreRounds(i, rounds, stopAt) && missed == 0; i++, done++) {
                int delay = i % 64;
                AtomicBoolean aboutToAwait = new AtomicBoolean();
                boolean[] seen = new boolean[2]; // ran in place; computed on for 10 s after the cancel
                Future<Object> awaiter = Io.with(io)
                        .call(() -> Io.async(() -> {
                            Thread awaiterThread = Thread.currentThread();
                            Future<?> awaiterTask = Io.currentTask().orElseThrow();
                            Future<Object> child = Io.async(() -> {
                                // In place: on the awaiter's thread, above it (the awaiter is not done)
                                seen[0] = Thread.currentThread() == awaiterThread && !awaiterTask.isDone();
                                if (!seen[0]) {
                                    return null; // the cancel came first: it runs after, on its own, uncancelled
                                }
                                long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); // a detector
                                while (System.nanoTime() - giveUp < 0) {
                                    Io.checkpoint(); // throws once the awaiter's cancel is in effect
                                    Thread.onSpinWait();
                                }
                                seen[1] = true;
                                return null;
                            });
                            aboutToAwait.set(true);
                            return child.await(); // one worker, this task running: it runs in place
                        }));
                cancelAfter(aboutToAwait, delay, awaiter);
                try {
                    awaiter.await();
                } catch (Cancelled expected) {
                    // the only outcome: at the await, or inside the task run in place
                }
                assertEquals(Future.State.CANCELLED, awaiter.state());
                ranInPlace += seen[0] ? 1 : 0;
                missed += seen[1] ? 1 : 0;
            }
        }
        System.out.printf(
                "cancel vs the start of a help: %d rounds of %d, %d children ran in place, %d missed the cancel%n",
                done, rounds, ranInPlace, missed);
        assertEquals(0, missed, "a task run in place computed on after its awaiter was cancelled");
        assertTrue(ranInPlace > done / 2, "few children ran in place: the race was not exercised");
    }

    /** The stress runs' budget: every round runs. */
    private static final Duration NO_BUDGET = Duration.ofDays(1);
    /** The rounds a race runs however long they take, before its time budget can stop it. */
    static final int MIN_ROUNDS = 1_000;

    /**
     * Whether a race of {@code rounds} runs its round {@code i}: all of them while time is left
     * until {@code stopAt} (System.nanoTime), and the first {@link #MIN_ROUNDS} in any case. On a
     * loaded machine the races' spin-waits across threads slow a round 20 to 50 times (a default
     * run of 10,000 took 43 s of its 60 s timeout beside two busy shells); a budget keeps such a run
     * inside its timeout, and every round it runs asserts the same.
     */
    private static boolean moreRounds(int i, int rounds, long stopAt) {
        return i < rounds && (i < MIN_ROUNDS || System.nanoTime() - stopAt < 0);
    }

    /**
     * Waits until {@code aboutToAwait} is set, spins {@code delay * 4} times more (so the cancel
     * lands at a varying point of the await and its help), then cancels {@code awaiter}, which
     * must not be done yet.
     */
    private static void cancelAfter(AtomicBoolean aboutToAwait, int delay, Future<?> awaiter) {
        while (!aboutToAwait.get()) {
            Thread.onSpinWait();
        }
        for (int k = 0; k < delay * 4; k++) {
            Thread.onSpinWait();
        }
        assertTrue(awaiter.cancel());
    }

    @Test
    void aThousandCreateCloseCyclesLeaveNoThreads() {
        int before = liveCycleWorkerThreads();
        for (int i = 0; i < 1_000; i++) {
            FiberIo io = FiberIo.builder().workers(2).name("cycle-" + i).build();
            int n = i;
            assertEquals(n, (int) io.call(() -> Io.async(() -> n).await()));
            io.close();
        }
        assertEquals(0, before);
        assertEquals(0, liveCycleWorkerThreads());
        System.out.println("1,000 create/close cycles: no worker thread left alive");
    }

    private static int liveCycleWorkerThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("cycle-")) {
                n++;
            }
        }
        return n;
    }

    @Test
    void yieldAndSpawnCostNextToDefaultSchedulerVirtualThreads() throws InterruptedException {
        // Measured, printed, not asserted (no timing thresholds in tests): FiberIo with 1 worker
        // against the JDK's default scheduler (one carrier per core), same program shape.
        int yields = 1_000_000;
        int spawns = 200_000;
        for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            Thread vt = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < yields; i++) {
                    Thread.yield();
                }
            });
            vt.join();
            double jdkYield = (System.nanoTime() - t0) / (double) yields;

            double weftYield;
            double weftSpawn;
            try (FiberIo io = FiberIo.builder().workers(1).build()) {
                long t1 = System.nanoTime();
                io.run(() -> {
                    for (int i = 0; i < yields; i++) {
                        Thread.yield();
                    }
                });
                weftYield = (System.nanoTime() - t1) / (double) yields;
                long t2 = System.nanoTime();
                int summed = io.call(() -> {
                    int sum = 0;
                    List<Future<Integer>> batch = new ArrayList<>(1024);
                    for (int i = 0; i < spawns; i++) {
                        batch.add(Io.async(() -> 1));
                        if (batch.size() == 1024 || i == spawns - 1) {
                            for (Future<Integer> f : batch) {
                                sum += f.await();
                            }
                            batch.clear();
                        }
                    }
                    return sum;
                });
                assertEquals(spawns, summed);
                weftSpawn = (System.nanoTime() - t2) / (double) spawns;
            }

            // The same shape on the JDK: start a batch of 1,024 virtual threads, join them all.
            long t3 = System.nanoTime();
            int[] ran = new int[1];
            List<Thread> batch = new ArrayList<>(1024);
            for (int i = 0; i < spawns; i++) {
                batch.add(Thread.ofVirtual().start(() -> {}));
                if (batch.size() == 1024 || i == spawns - 1) {
                    for (Thread t : batch) {
                        t.join();
                        ran[0]++;
                    }
                    batch.clear();
                }
            }
            double jdkSpawn = (System.nanoTime() - t3) / (double) spawns;
            assertEquals(spawns, ran[0]);
            System.out.printf(
                    "round %d: yield  FiberIo(1 worker) %6.1f ns, JDK default scheduler %6.1f ns, ratio %.2fx%n",
                    round, weftYield, jdkYield, jdkYield / weftYield);
            System.out.printf(
                    "round %d: spawn+await FiberIo(1 worker) %6.1f ns, JDK vthread start+join %6.1f ns, ratio %.2fx%n",
                    round, weftSpawn, jdkSpawn, jdkSpawn / weftSpawn);
        }
    }

    /** Two fibers hand the turn back and forth with park/unpark: one round trip = two wake-ups. */
    private static double pingPongNanos(FiberIo io, int rounds) {
        return io.call(() -> {
            java.util.concurrent.atomic.AtomicInteger turn = new java.util.concurrent.atomic.AtomicInteger();
            Thread pinger = Thread.currentThread();
            java.util.concurrent.CompletableFuture<Thread> ponger = new java.util.concurrent.CompletableFuture<>();
            Future<Void> echo = Io.async(() -> {
                ponger.complete(Thread.currentThread());
                for (int i = 0; i < rounds; i++) {
                    while (turn.get() != 1) {
                        java.util.concurrent.locks.LockSupport.park();
                    }
                    turn.set(0);
                    java.util.concurrent.locks.LockSupport.unpark(pinger);
                }
                return null;
            });
            Thread other = Future.from(ponger).await();
            long start = System.nanoTime();
            for (int i = 0; i < rounds; i++) {
                turn.set(1);
                java.util.concurrent.locks.LockSupport.unpark(other);
                while (turn.get() != 0) {
                    java.util.concurrent.locks.LockSupport.park();
                }
            }
            long elapsed = System.nanoTime() - start;
            echo.await();
            assertEquals(0, turn.get(), "every round trip completed");
            return elapsed / (double) rounds;
        });
    }

    /** A plain thread runs many tiny root tasks one after another: each one wakes a worker. */
    private static double remoteCallNanos(FiberIo io, int calls) {
        long start = System.nanoTime();
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            int n = i;
            sum += io.call(() -> n);
        }
        long elapsed = System.nanoTime() - start;
        assertEquals((long) calls * (calls - 1) / 2, sum);
        return elapsed / (double) calls;
    }

    @Test
    void spinningBeforeParkingOnTwoWorkers() {
        int rounds = 100_000;
        for (int round = 0; round < 3; round++) {
            double spinning;
            double parking;
            try (FiberIo io = FiberIo.builder().workers(2).build()) {
                spinning = pingPongNanos(io, rounds);
            }
            try (FiberIo io =
                    FiberIo.builder().workers(2).spinBeforeParking(false).build()) {
                parking = pingPongNanos(io, rounds);
            }
            System.out.printf(
                    "round %d: fiber ping-pong round trip on 2 workers: spinning %,.0f ns, no spinning %,.0f ns%n",
                    round, spinning, parking);
            double remoteSpinning;
            double remoteParking;
            try (FiberIo io = FiberIo.builder().workers(2).build()) {
                remoteSpinning = remoteCallNanos(io, rounds / 10);
            }
            try (FiberIo io =
                    FiberIo.builder().workers(2).spinBeforeParking(false).build()) {
                remoteParking = remoteCallNanos(io, rounds / 10);
            }
            System.out.printf(
                    "round %d: root task from a plain thread, call+return on 2 workers: spinning %,.0f ns, no spinning %,.0f ns%n",
                    round, remoteSpinning, remoteParking);
        }
    }
}
