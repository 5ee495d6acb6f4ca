package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Future.State;
import io.weft.Io;
import io.weft.ParkToken;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Io.race and Io.raceAndJoin: who wins, what happens to the loser and to the waiters. */
class RacesTest {
    private static final Duration JOIN = Duration.ofSeconds(10);

    /** A race between two tasks over stages the test completes, its racer on a thread of its own, parked. */
    private record ParkedRace(
            CompletableFuture<String> stageA,
            CompletableFuture<String> stageB,
            Task<String> a,
            Task<String> b,
            AtomicReference<Object> outcome,
            Thread racer) {
        static ParkedRace start(DeferredIo io) {
            CompletableFuture<String> stageA = new CompletableFuture<>();
            CompletableFuture<String> stageB = new CompletableFuture<>();
            Task<String> a = Task.of(Future.from(stageA), "a");
            Task<String> b = Task.of(Future.from(stageB), "b");
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread racer = callOnNewThread(io, () -> Io.race(a, b), outcome);
            DeferredIo.awaitParkedOnToken(racer);
            return new ParkedRace(stageA, stageB, a, b, outcome, racer);
        }
    }

    @Test
    void theFirstInputToCompleteWinsTheLoserIsCancelledAndNoWaiterIsLeft() throws InterruptedException {
        ParkedRace race = ParkedRace.start(new DeferredIo());
        assertEquals(1, race.a().waiterCount());
        assertEquals(1, race.b().waiterCount());

        race.stageB().complete("b");
        assertTrue(race.racer().join(JOIN));
        assertEquals("b", race.outcome().get());
        assertEquals(State.CANCELLED, race.a().state());
        assertFalse(race.stageA().isDone(), "cancelling a Future.from leaves its stage alone");
        assertEquals(0, race.a().waiterCount());
        assertEquals(0, race.b().waiterCount());
    }

    /** The winner slot is one, shared: b's completion claims it, a's later one finds it taken. */
    @Test
    void whenBothInputsCompleteBeforeTheRacerWakesTheFirstToCompleteWins() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        ParkedRace race = ParkedRace.start(io);

        io.holdReadies();
        race.stageB().complete("b");
        race.stageA().complete("a"); // b's wake-up is held: the racer is still parked
        assertTrue(DeferredIo.isParkedOnToken(race.racer()));
        io.releaseReadies();

        assertTrue(race.racer().join(JOIN));
        assertEquals("b", race.outcome().get(), "b completed first; both were done when the racer woke");
    }

    @Test
    void whenBothInputsAreDoneTheFirstArgumentWins() {
        IllegalStateException failure = new IllegalStateException("a failed");

        assertEquals("a", Io.race(Future.completed("a"), Future.completed("b")));
        assertSame(
                failure,
                assertThrows(
                        IllegalStateException.class, () -> Io.race(Future.failed(failure), Future.completed("b"))));
        assertThrows(Cancelled.class, () -> Io.race(Future.failed(new Cancelled("a")), Future.completed("b")));
    }

    @Test
    void aWinnerThatFailedIsRethrownAsTheSameInstance() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        CompletableFuture<String> stageA = new CompletableFuture<>();
        Task<String> b = Task.of(Future.from(new CompletableFuture<String>()), "b");
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread racer = callOnNewThread(io, () -> Io.race(Future.from(stageA), b), outcome);
        DeferredIo.awaitParkedOnToken(racer);
        IllegalArgumentException failure = new IllegalArgumentException("a failed");

        stageA.completeExceptionally(failure);
        assertTrue(racer.join(JOIN));
        assertSame(failure, outcome.get());
        assertEquals(State.CANCELLED, b.state());
    }

    @Test
    void cancellingTheRacingTaskCancelsBothInputsAndThrowsCancelled() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        Task<String> a = Task.of(Future.from(new CompletableFuture<String>()), "a");
        Task<String> b = Task.of(Future.from(new CompletableFuture<String>()), "b");
        Task<String> racing = io.async(() -> Io.race(a, b));
        Thread runner = io.runNextOnNewThread("racer");
        DeferredIo.awaitParkedOnToken(runner);

        assertTrue(racing.cancel());
        assertTrue(runner.join(JOIN));
        assertEquals(State.CANCELLED, racing.state());
        assertEquals(State.CANCELLED, a.state());
        assertEquals(State.CANCELLED, b.state());
        assertEquals(0, a.waiterCount());
        assertEquals(0, b.waiterCount());
    }

    @Test
    void aRaceStartedAfterTheTaskWasCancelledCancelsBothInputsAtOnce() {
        DeferredIo io = new DeferredIo();
        Task<String> a = Task.of(Future.from(new CompletableFuture<String>()), "a");
        Task<String> b = Task.of(Future.from(new CompletableFuture<String>()), "b");
        Task<String> racing = io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            return Io.race(a, b);
        });
        io.runAll();

        assertEquals(State.CANCELLED, racing.state());
        assertEquals(State.CANCELLED, a.state());
        assertEquals(State.CANCELLED, b.state());
    }

    @Test
    void raceReturnsWithoutWaitingForTheLoserToUnwind() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        UnwindingLoser loser = new UnwindingLoser(io);
        CompletableFuture<String> stageA = new CompletableFuture<>();
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread racer = callOnNewThread(io, () -> Io.race(Future.from(stageA), loser.task), outcome);
        DeferredIo.awaitParkedOnToken(racer);

        stageA.complete("a");
        assertTrue(loser.inFinally.await(10, TimeUnit.SECONDS));
        assertTrue(racer.join(JOIN), "race waited for the loser");
        assertEquals("a", outcome.get());
        assertFalse(loser.task.isDone());
        assertEquals(0, loser.task.waiterCount(), "the race deregistered from the loser still unwinding");

        loser.letUnwind.countDown();
        assertTrue(loser.runner.join(JOIN));
        assertEquals(State.CANCELLED, loser.task.state());
    }

    @Test
    void raceAndJoinReturnsOnlyAfterTheLoserHasUnwound() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        UnwindingLoser loser = new UnwindingLoser(io);
        CompletableFuture<String> stageA = new CompletableFuture<>();
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread racer = callOnNewThread(io, () -> Io.raceAndJoin(Future.from(stageA), loser.task), outcome);
        DeferredIo.awaitParkedOnToken(racer);

        stageA.complete("a");
        assertTrue(loser.inFinally.await(10, TimeUnit.SECONDS));
        DeferredIo.awaitParkedOnToken(racer); // now parked joining the loser, which cannot finish yet
        assertTrue(racer.isAlive());
        assertNull(outcome.get());

        loser.letUnwind.countDown();
        assertTrue(racer.join(JOIN));
        assertEquals("a", outcome.get());
        assertEquals(State.CANCELLED, loser.task.state());
    }

    /**
     * A plain thread's waits end on interrupt, whatever a shield says: raceAndJoin's shielded wait
     * for the loser used to end there too, with Cancelled in place of the winner's value and the
     * loser still unwinding. Now it waits through the interrupt and gives it back after.
     */
    @Test
    void aPlainThreadsRaceAndJoinWaitsForTheLoserThroughAnInterrupt() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        UnwindingLoser loser = new UnwindingLoser(io);
        CompletableFuture<String> stageA = new CompletableFuture<>();
        AtomicReference<Object> outcome = new AtomicReference<>();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        Thread racer = Thread.ofPlatform().name("plain racer").daemon().start(() -> {
            try {
                outcome.set(Io.raceAndJoin(Future.from(stageA), loser.task)); // no Io installed, no task
            } catch (Throwable e) {
                outcome.set(e);
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        DeferredIo.awaitParkedOnToken(racer);
        stageA.complete("a");
        assertTrue(loser.inFinally.await(10, TimeUnit.SECONDS));
        DeferredIo.awaitParkedOnToken(racer); // joining the loser, which cannot finish yet
        racer.interrupt();
        DeferredIo.awaitParkedOnToken(racer); // still joining
        assertNull(outcome.get());
        loser.letUnwind.countDown();
        assertTrue(racer.join(JOIN));
        assertEquals("a", outcome.get(), "the winner's value, after the loser unwound");
        assertTrue(interruptedAfter.get(), "the interrupt is given back");
        assertEquals(State.CANCELLED, loser.task.state());
    }

    /**
     * The same when the interrupt is the plain thread's cancellation, while the race is still
     * parked: both inputs are cancelled and joined, through a second interrupt too.
     */
    @Test
    void aPlainThreadInterruptedWhileRacingJoinsBothInputsBeforeItThrows() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        UnwindingLoser loser = new UnwindingLoser(io);
        CompletableFuture<String> stageA = new CompletableFuture<>();
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread racer = Thread.ofPlatform().name("plain racer").daemon().start(() -> {
            try {
                outcome.set(Io.raceAndJoin(Future.from(stageA), loser.task));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        DeferredIo.awaitParkedOnToken(racer);
        racer.interrupt(); // the plain thread's cancellation: the race cancels both inputs and joins them
        assertTrue(loser.inFinally.await(10, TimeUnit.SECONDS));
        DeferredIo.awaitParkedOnToken(racer);
        racer.interrupt(); // again, while it joins
        DeferredIo.awaitParkedOnToken(racer);
        assertNull(outcome.get());
        loser.letUnwind.countDown();
        assertTrue(racer.join(JOIN));
        assertInstanceOf(Cancelled.class, outcome.get());
        assertEquals(State.CANCELLED, loser.task.state());
    }

    /** A task parked on its own thread whose finally block waits for the test to let it finish. */
    private static final class UnwindingLoser {
        final CountDownLatch inFinally = new CountDownLatch(1);
        final CountDownLatch letUnwind = new CountDownLatch(1);
        final Task<String> task;
        final Thread runner;

        UnwindingLoser(DeferredIo io) {
            task = io.async(() -> {
                try {
                    io.suspendRaw(ParkToken.create());
                    return "woken without cancel";
                } finally {
                    inFinally.countDown();
                    letUnwind.await(); // not a suspend point: a slow cleanup
                }
            });
            runner = io.runNextOnNewThread("loser");
            DeferredIo.awaitParkedOnToken(runner);
        }
    }

    /** Calls {@code body} with {@code io} installed on a new plain thread; its value or exception lands in {@code outcome}. */
    private static Thread callOnNewThread(DeferredIo io, Callable<?> body, AtomicReference<Object> outcome) {
        return Thread.ofPlatform().name("racer").daemon().start(() -> {
            try {
                outcome.set(Io.with(io).call(body));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
    }
}
