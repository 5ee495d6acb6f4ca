package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.weft.Future;
import io.weft.Future.State;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.Task.CancelOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The races the implementation notes of Task and its cancellation classes guard against, run
 * many times on platform threads that start each round together. A lost cancel or lost wake-up
 * shows up as a thread that never finishes: it is reported with its stack rather than left to
 * hang the build.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TaskConcurrencyTest {
    private static final int ROUNDS = 20_000;
    /** How long a worker may take before the test calls it stuck (the whole test takes ~1 s). */
    private static final Duration STUCK = Duration.ofSeconds(20);

    private static final long SEED = 0x5EEDL;

    /** One round of cancel-vs-complete: a bodiless task and the stage that completes it. */
    private record Completion(CompletableFuture<Object> stage, Task<Object> future, Object value) {}

    @Test
    void cancelRacingExternalCompletionHasExactlyOneWinnerAndNeverLosesTheValue() throws Exception {
        Completion[] rounds = new Completion[ROUNDS];
        for (int i = 0; i < ROUNDS; i++) {
            CompletableFuture<Object> stage = new CompletableFuture<>();
            rounds[i] = new Completion(stage, Task.of(Future.from(stage), "future"), new Object());
        }
        boolean[] cancelReturned = new boolean[ROUNDS];
        State[] stateRightAfterCancel = new State[ROUNDS];
        Object[] valueSeenByLoser = new Object[ROUNDS];
        SpinBarrier barrier = new SpinBarrier(2);
        Workers workers = new Workers(barrier);

        workers.start("completer", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                barrier.await();
                rounds[i].stage().complete(rounds[i].value());
            }
        });
        workers.start("canceller", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                Task<Object> future = rounds[i].future();
                barrier.await();
                boolean cancelled = future.cancel();
                cancelReturned[i] = cancelled;
                stateRightAfterCancel[i] = future.state();
                if (!cancelled) {
                    // The completer claimed it: its value must become visible, never null or lost.
                    spinUntil(future::isDone, "completion claimed by the completer to publish, " + future);
                    valueSeenByLoser[i] = future.resultNow();
                }
            }
        });
        workers.joinAll();

        for (int i = 0; i < ROUNDS; i++) {
            Task<Object> future = rounds[i].future();
            String round = "round " + i + ": " + future;
            if (cancelReturned[i]) {
                assertEquals(State.CANCELLED, stateRightAfterCancel[i], round + " not cancelled at once");
                assertEquals(State.CANCELLED, future.state(), round);
            } else {
                assertEquals(State.SUCCESS, future.state(), round + " cancel() said false but it did not succeed");
                assertSame(rounds[i].value(), future.resultNow(), round);
                assertSame(rounds[i].value(), valueSeenByLoser[i], round);
            }
        }
    }

    @Test
    void cancelRacingATaskThatIsParkingAlwaysEndsItCancelled() throws Exception {
        DeferredIo io = new DeferredIo();
        AtomicInteger startedRound = new AtomicInteger(-1);
        List<Task<String>> tasks = new ArrayList<>(ROUNDS);
        for (int i = 0; i < ROUNDS; i++) {
            int round = i;
            tasks.add(io.async(() -> {
                startedRound.set(round);
                io.suspendRaw(ParkToken.create()); // nobody readies it: only cancel can end this park
                return "woken without cancel";
            }));
        }
        CancelOutcome[] outcomes = new CancelOutcome[ROUNDS];
        Workers workers = new Workers(null);

        // The runner runs task i to its end before task i + 1, so round i is in progress until cancelled.
        workers.start("runner", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                assertTrue(io.runNext());
            }
        });
        workers.start("canceller", () -> {
            SplittableRandom random = new SplittableRandom(SEED);
            for (int i = 0; i < ROUNDS; i++) {
                int round = i;
                spinUntil(() -> startedRound.get() == round, "round " + round + " to start");
                // Land anywhere from just before the park (token publication, re-check) to inside it.
                int spins = random.nextInt(i % 2 == 0 ? 64 : 2_048);
                for (int s = 0; s < spins; s++) {
                    Thread.onSpinWait();
                }
                outcomes[i] = tasks.get(i).requestCancel();
            }
        });
        workers.joinAll(() -> "round " + startedRound.get() + ": " + tasks.get(Math.max(0, startedRound.get())));

        for (int i = 0; i < ROUNDS; i++) {
            assertEquals(CancelOutcome.REQUESTED, outcomes[i], "round " + i);
            assertEquals(State.CANCELLED, tasks.get(i).state(), "round " + i);
        }
    }

    /**
     * A task's rarely used fields (its number, its await link, its cancel scopes) live in a side
     * object made on first use by whichever thread needs it first. Two threads making it at once
     * must end with one: the task's own thread recording an await while another draws the task's
     * number for a message, and a third drawing it too. A side object installed without a CAS
     * loses one of the two writes: the number changes afterwards, or the await link is gone.
     */
    @Test
    void aNumberDrawnWhileTheTaskRecordsAnAwaitIsKeptAndSoIsTheAwait() throws Exception {
        DeferredIo io = new DeferredIo();
        Task<?> awaited = io.async(() -> "awaited");
        List<Task<String>> tasks = new ArrayList<>(ROUNDS);
        for (int i = 0; i < ROUNDS; i++) {
            tasks.add(io.async(() -> "never run"));
        }
        long[] drawnByFirst = new long[ROUNDS];
        long[] drawnBySecond = new long[ROUNDS];
        SpinBarrier barrier = new SpinBarrier(3);
        Workers workers = new Workers(barrier);

        workers.start("awaiter", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                barrier.await();
                tasks.get(i).setAwaiting(awaited);
            }
        });
        workers.start("first reader", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                barrier.await();
                drawnByFirst[i] = tasks.get(i).number();
            }
        });
        workers.start("second reader", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                barrier.await();
                drawnBySecond[i] = tasks.get(i).number();
            }
        });
        workers.joinAll();

        for (int i = 0; i < ROUNDS; i++) {
            Task<String> task = tasks.get(i);
            String round = "round " + i + ": " + task;
            assertEquals(drawnByFirst[i], drawnBySecond[i], round + ": two numbers drawn for one task");
            assertEquals(drawnByFirst[i], task.number(), round + ": its number changed after it was drawn");
            assertSame(awaited, task.awaiting(), round + ": the await link was lost");
        }
    }

    @Test
    void manyPlainThreadsAwaitingOneFutureAllSeeTheValueWhenAnotherThreadCompletesIt() throws Exception {
        int awaiters = 8;
        int rounds = 2_000;
        DeferredIo io = new DeferredIo();
        Completion[] completions = new Completion[rounds];
        for (int r = 0; r < rounds; r++) {
            CompletableFuture<Object> stage = new CompletableFuture<>();
            completions[r] = new Completion(stage, Task.of(Future.from(stage), "future"), new Object());
        }
        Object[][] seen = new Object[rounds][awaiters];
        CyclicBarrier start = new CyclicBarrier(awaiters + 1);
        AtomicInteger round = new AtomicInteger();
        Workers workers = new Workers(null);

        for (int k = 0; k < awaiters; k++) {
            int awaiter = k;
            workers.start("awaiter-" + k, () -> {
                for (int r = 0; r < rounds; r++) {
                    Task<Object> future = completions[r].future();
                    start.await(STUCK.toSeconds(), TimeUnit.SECONDS);
                    seen[r][awaiter] = Io.with(io).call(future::await);
                }
            });
        }
        workers.start("completer", () -> {
            SplittableRandom random = new SplittableRandom(SEED);
            for (int r = 0; r < rounds; r++) {
                start.await(STUCK.toSeconds(), TimeUnit.SECONDS);
                round.set(r);
                // Complete anywhere from before the awaiters register to after they have parked.
                int spins = random.nextInt(4_096);
                for (int s = 0; s < spins; s++) {
                    Thread.onSpinWait();
                }
                completions[r].stage().complete(completions[r].value());
            }
        });
        workers.joinAll(() -> "round " + round.get() + ": " + completions[round.get()].future());

        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < awaiters; k++) {
                assertSame(completions[r].value(), seen[r][k], "round " + r + ", awaiter " + k);
            }
            assertEquals(0, completions[r].future().waiterCount(), "round " + r);
        }
    }

    /**
     * Guards the STARTED bit: while cancel() moves a not-started task NEW -> COMPLETING ->
     * CANCELLED, a concurrent run() must return quietly (the body never runs), not mistake
     * COMPLETING for "already started" and throw.
     */
    @Test
    void cancelRacingTheStartOfATaskEitherPreventsTheBodyOrIsRequestedAndRunNeverThrows() throws Exception {
        DeferredIo io = new DeferredIo();
        List<Task<String>> tasks = new ArrayList<>(ROUNDS);
        boolean[] bodyRan = new boolean[ROUNDS]; // written by the runner, read after join
        for (int i = 0; i < ROUNDS; i++) {
            int round = i;
            tasks.add(Task.spawned(io, () -> {
                bodyRan[round] = true;
                return "value";
            }));
        }
        Throwable[] runThrew = new Throwable[ROUNDS];
        CancelOutcome[] outcomes = new CancelOutcome[ROUNDS];
        SpinBarrier barrier = new SpinBarrier(2);
        Workers workers = new Workers(barrier);

        workers.start("runner", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                Task<String> task = tasks.get(i);
                barrier.await();
                try {
                    task.run();
                } catch (Throwable e) {
                    runThrew[i] = e;
                }
            }
        });
        workers.start("canceller", () -> {
            for (int i = 0; i < ROUNDS; i++) {
                Task<String> task = tasks.get(i);
                barrier.await();
                outcomes[i] = task.requestCancel();
            }
        });
        workers.joinAll();

        List<String> problems = new ArrayList<>();
        for (int i = 0; i < ROUNDS; i++) {
            Task<String> task = tasks.get(i);
            String round = "round " + i + " (" + outcomes[i] + ", body ran: " + bodyRan[i] + ", " + task + ")";
            if (runThrew[i] != null) {
                problems.add(round + ": RawTask.run threw " + runThrew[i]);
            }
            switch (outcomes[i]) {
                case CANCELLED_BEFORE_START -> {
                    if (bodyRan[i] || task.state() != State.CANCELLED) {
                        problems.add(round + ": cancelled before start, yet body ran or not CANCELLED");
                    }
                }
                case REQUESTED -> {
                    if (!bodyRan[i] || task.state() != State.CANCELLED) {
                        problems.add(round + ": requested while running, yet body did not run or value kept");
                    }
                }
                case ALREADY_DONE -> {
                    if (!bodyRan[i] || task.state() != State.SUCCESS) {
                        problems.add(round + ": already done, yet not SUCCESS");
                    }
                }
                default -> problems.add(round + ": unexpected outcome");
            }
        }
        assertEquals(
                List.of(),
                problems.stream().limit(5).toList(),
                problems.size() + " of " + ROUNDS + " rounds went wrong");
    }

    // ---------------------------------------------------------------- harness

    /** Spins (then yields) until {@code condition} holds; fails after {@link #STUCK}. */
    private static void spinUntil(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + STUCK.toNanos();
        for (int spins = 0; !condition.getAsBoolean(); spins++) {
            if (spins < 1_000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
                if (System.nanoTime() - deadline > 0) {
                    throw new AssertionError("gave up waiting for " + what);
                }
            }
        }
    }

    /**
     * A reusable barrier that spins (then yields) instead of blocking, so the parties leave each
     * round within a few hundred nanoseconds of each other: a blocking barrier would give the race
     * to whichever thread is not woken. A round a party never reaches fails the waiters after
     * {@link #STUCK}, or at once when {@link #abandon()}ed.
     */
    static final class SpinBarrier {
        private final int parties;
        private final AtomicLong arrivals = new AtomicLong();
        private volatile boolean abandoned;

        SpinBarrier(int parties) {
            this.parties = parties;
        }

        void await() {
            long arrived = arrivals.incrementAndGet();
            long target = ((arrived - 1) / parties + 1) * parties;
            spinUntil(
                    () -> {
                        if (abandoned) {
                            throw new IllegalStateException("barrier abandoned");
                        }
                        return arrivals.get() >= target;
                    },
                    "the other parties of round " + (target / parties - 1));
        }

        void abandon() {
            abandoned = true;
        }
    }

    /** Daemon platform threads whose failures are collected and whose hangs are reported. */
    private static final class Workers {
        private final SpinBarrier barrier;
        private final List<Thread> threads = new ArrayList<>();
        private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();

        Workers(SpinBarrier barrier) {
            this.barrier = barrier;
        }

        void start(String name, ThrowingRunnable body) {
            threads.add(Thread.ofPlatform().name(name).daemon().start(() -> {
                try {
                    body.run();
                } catch (Throwable e) {
                    errors.add(e);
                    if (barrier != null) {
                        barrier.abandon(); // let the partner fail fast instead of waiting for a round
                    }
                }
            }));
        }

        void joinAll() throws InterruptedException {
            joinAll(() -> "");
        }

        /** Joins every worker; a worker still alive after {@link #STUCK} fails the test with its stack. */
        void joinAll(Supplier<String> progress) throws InterruptedException {
            long deadline = System.nanoTime() + STUCK.toNanos();
            for (Thread t : threads) {
                long left = Math.max(1, deadline - System.nanoTime());
                if (!t.join(Duration.ofNanos(left))) {
                    if (barrier != null) {
                        barrier.abandon();
                    }
                    String stacks = threads.stream()
                            .map(w -> w.getName() + " " + w.getState() + "\n    at "
                                    + Arrays.stream(w.getStackTrace())
                                            .map(String::valueOf)
                                            .collect(Collectors.joining("\n    at ")))
                            .collect(Collectors.joining("\n"));
                    fail(t.getName() + " is stuck (lost wake-up or lost cancel?) at " + progress.get() + "\n" + stacks);
                }
            }
            Throwable first = errors.peek();
            if (first != null) {
                AssertionError e = new AssertionError(errors.size() + " worker(s) failed; first: " + first, first);
                errors.stream().skip(1).forEach(e::addSuppressed);
                throw e;
            }
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
