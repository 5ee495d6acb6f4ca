package io.weft.modelcheck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Future.State;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimedOut;
import io.weft.internal.Task;
import io.weft.modelcheck.ModelThreads.Round;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck for Future/Task, the state machine every feature rests on.
 *
 * <p>Linearizability: a future completed from outside (by a CompletableFuture) under complete,
 * fail, cancel, state and a non-waiting await, against a sequential one-shot cell ({@link Spec}),
 * by model checking and by stress.
 *
 * <p>Interleavings of a task with a body, on plain threads: cancel racing the body's completion,
 * its shield exit and its park; awaiting racing completion and cancellation. A lost cancel or a
 * lost wake-up is a hang Lincheck reports; the checks after the join hold the state machine's
 * promises: {@code cancel()} true means the future never succeeds, false means it was already
 * done (or being completed), and a cancel's interrupt never outlives the task on its thread.
 */
@Param(name = "value", gen = IntGen.class, conf = "1:9")
public class FutureLincheckTest {
    private final CompletableFuture<Integer> stage = new CompletableFuture<>();
    private final Future<Integer> future = Future.from(stage);

    /** Public for Lincheck, which creates one instance per scenario. */
    public FutureLincheckTest() {}

    /** Completes the stage, and so the future, with {@code value}. */
    @Operation
    public void complete(@Param(name = "value") int value) {
        stage.complete(value);
    }

    /** Completes the stage, and so the future, with a failure. */
    @Operation
    public void fail() {
        stage.completeExceptionally(new IllegalStateException("failed"));
    }

    /** {@link Future#cancel}. */
    @Operation
    public boolean cancel() {
        return future.cancel();
    }

    /** {@link Future#state}. */
    @Operation
    public State state() {
        return future.state();
    }

    /** {@link Future#await(Duration)} with a zero timeout: the value or what ended the wait. */
    @Operation
    public Object awaitNow() {
        try {
            return future.await(Duration.ZERO);
        } catch (TimedOut e) {
            return "timed out";
        } catch (Cancelled e) {
            return "cancelled";
        } catch (IllegalStateException e) {
            return "failed";
        }
    }

    /** The sequential specification: a cell that is set once, by a value, a failure or a cancel. */
    public static final class Spec {
        private State state = State.PENDING;
        private int value;

        /** Public for Lincheck. */
        public Spec() {}

        public void complete(int v) {
            if (state == State.PENDING) {
                state = State.SUCCESS;
                value = v;
            }
        }

        public void fail() {
            if (state == State.PENDING) {
                state = State.FAILED;
            }
        }

        public boolean cancel() {
            if (state != State.PENDING) {
                return false;
            }
            state = State.CANCELLED;
            return true;
        }

        public State state() {
            return state;
        }

        public Object awaitNow() {
            return switch (state) {
                case PENDING -> "timed out";
                case SUCCESS -> value;
                case FAILED -> "failed";
                case CANCELLED -> "cancelled";
            };
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aFutureCompletedFromOutsideIsLinearizableUnderModelChecking() {
        ModelThreads.linearizableUnderModelChecking(FutureLincheckTest.class, Spec.class, 20);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aFutureCompletedFromOutsideIsLinearizableUnderStress() {
        ModelThreads.linearizableUnderStress(FutureLincheckTest.class, Spec.class, 20);
    }

    // ------------------------------------------------------------ a task with a body, interleaved

    /** A task whose body is {@code body(task)}, for bodies that use their own task's state. */
    private interface Body {
        Integer run(Task<Integer> self) throws Exception;
    }

    private static Task<Integer> task(Body body) {
        AtomicReference<Task<Integer>> self = new AtomicReference<>();
        self.set(Task.spawned(Io.current(), () -> body.run(self.get())));
        return self.get();
    }

    /** Runs {@code task} on the calling thread and notes whether an interrupt outlived it. */
    private static Runnable runNoting(Task<Integer> task, boolean[] interruptLeaked) {
        return () -> {
            task.run();
            interruptLeaked[0] = Thread.interrupted();
        };
    }

    /** The promise of cancel(): true means the task ends cancelled, false that it had its value. */
    private static void assertCancelOutcome(boolean cancelReturned, Task<Integer> task) {
        assertTrue(task.isDone(), task.toString());
        if (task.state() == State.FAILED) {
            throw new AssertionError("the task failed", task.exceptionNow());
        }
        assertEquals(
                cancelReturned ? State.CANCELLED : State.SUCCESS,
                task.state(),
                "cancel() returned " + cancelReturned + ": " + task);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void cancelRacingCompletionHasOneWinner() {
        ModelThreads.explore(() -> {
            Task<Integer> t = task(self -> 1);
            boolean[] cancelled = new boolean[1];
            boolean[] leaked = new boolean[1];
            return Round.of(
                    () -> {
                        assertCancelOutcome(cancelled[0], t);
                        assertFalse(leaked[0], "a cancel's interrupt outlived the task on its thread");
                    },
                    runNoting(t, leaked),
                    () -> cancelled[0] = t.cancel());
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void cancelRacingAShieldExitTakesEffectAfterTheShieldAndNeverLeaksTheInterrupt() {
        ModelThreads.explore(() -> {
            boolean[] cancelSeenInShield = new boolean[1];
            Task<Integer> t = task(self -> {
                self.enterShield();
                cancelSeenInShield[0] = self.isCancellationEffective();
                self.exitShield();
                return 1;
            });
            boolean[] cancelled = new boolean[1];
            boolean[] leaked = new boolean[1];
            return Round.of(
                    () -> {
                        assertFalse(cancelSeenInShield[0], "a shield defers cancellation");
                        assertCancelOutcome(cancelled[0], t);
                        assertFalse(leaked[0], "the re-interrupt at the shield's exit outlived the task");
                    },
                    runNoting(t, leaked),
                    () -> cancelled[0] = t.cancel());
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void cancelReachesATaskParkingAtTheSameMoment() {
        ModelThreads.explore(() -> {
            Task<Integer> t = task(self -> {
                Io.current().suspendRaw(ParkToken.create()); // nobody readies it: only a cancel ends it
                return 1;
            });
            boolean[] cancelled = new boolean[1];
            boolean[] leaked = new boolean[1];
            return Round.of(
                    () -> {
                        assertTrue(cancelled[0], "the task never completes by itself");
                        assertCancelOutcome(true, t);
                        assertFalse(leaked[0]);
                    },
                    runNoting(t, leaked),
                    () -> cancelled[0] = t.cancel());
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aParkedTaskReadiedAndCancelledAtOnceEndsExactlyOnce() {
        ModelThreads.explore(() -> {
            Io io = Io.current();
            AtomicReference<ParkToken> parkedOn = new AtomicReference<>();
            Task<Integer> t = task(self -> {
                ParkToken token = ParkToken.create(); // a token belongs to the task that parks on it
                parkedOn.set(token);
                io.suspendRaw(token);
                return 1;
            });
            boolean[] cancelled = new boolean[1];
            boolean[] leaked = new boolean[1];
            return Round.of(
                    () -> {
                        assertCancelOutcome(cancelled[0], t);
                        assertFalse(leaked[0]);
                    },
                    runNoting(t, leaked),
                    () -> cancelled[0] = t.cancel(),
                    () -> {
                        ParkToken token = parkedOn.get();
                        if (token != null) { // else the cancel alone ends the park
                            io.ready(token);
                        }
                    });
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void anAwaiterIsWokenByCompletionAndByCancel() {
        ModelThreads.explore(() -> {
            CompletableFuture<Integer> source = new CompletableFuture<>();
            Future<Integer> f = Future.from(source);
            Object[] seen = new Object[1];
            boolean[] cancelled = new boolean[1];
            return Round.of(
                    () -> {
                        assertEquals(cancelled[0] ? "cancelled" : (Object) 4, seen[0], f.toString());
                    },
                    () -> {
                        try {
                            seen[0] = f.await();
                        } catch (Cancelled e) {
                            seen[0] = "cancelled";
                        }
                    },
                    () -> source.complete(4),
                    () -> cancelled[0] = f.cancel());
        });
    }
}
