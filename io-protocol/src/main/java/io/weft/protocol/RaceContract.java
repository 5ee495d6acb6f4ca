package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §3.5: race waits for the first input to complete (ties to the lower index), deregisters
 * from every input, cancels the loser, returns the winner's outcome at winner time; a cancelled
 * racer cancels both inputs.
 */
public abstract class RaceContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected RaceContract() {}

    @Test
    void raceReturnsTheFirstInputToComplete() {
        CompletableFuture<String> slow = new CompletableFuture<>();
        CompletableFuture<String> fast = new CompletableFuture<>();
        Future<String> a = Future.from(slow);
        Future<String> b = Future.from(fast);
        assertEquals("fast", inIoWhenItParks("completer", () -> fast.complete("fast"), () -> Io.race(a, b)));
        assertEquals(Future.State.CANCELLED, a.state(), "the loser is cancelled");
        assertFalse(slow.isDone());
    }

    @Test
    void theFirstToCompleteWinsEvenIfTheOtherCompletesBeforeTheRacerWakes() {
        CompletableFuture<String> first = new CompletableFuture<>();
        CompletableFuture<String> second = new CompletableFuture<>();
        Future<String> a = Future.from(second);
        Future<String> b = Future.from(first);
        Runnable completeBothInOrder = () -> {
            first.complete("b, completed first");
            second.complete("a, completed second");
        };
        assertEquals("b, completed first", inIoWhenItParks("completer", completeBothInOrder, () -> Io.race(a, b)));
    }

    @Test
    void aTaskRacingItsOwnFutureFails() {
        Future<Object> racer = inIo(() -> Io.async(() -> {
            Future<?> self = Io.currentTask().orElseThrow();
            return Io.race(self, Future.from(new CompletableFuture<>()));
        }));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> inIo(racer::await));
        assertTrue(e.getMessage().contains("own future"), e.getMessage());
    }

    @Test
    void whenBothAreDoneTheLowerArgumentIndexWins() {
        Future<String> a = Future.completed("a");
        Future<String> b = Future.completed("b");
        assertEquals("a", inIo(() -> Io.race(a, b)));
        assertEquals("b", inIo(() -> Io.race(b, a)));
    }

    @Test
    void twoTasksThatFinishBeforeTheRaceLooksResolveToTheFirstArgument() {
        Future<String> a = inIo(() -> Io.async(() -> "a"));
        Future<String> b = inIo(() -> Io.async(() -> "b"));
        awaitDone(a);
        awaitDone(b);
        assertEquals("a", inIo(() -> Io.race(a, b)));
    }

    @Test
    void raceRethrowsTheWinnersUncheckedFailureAsTheSameInstance() {
        IllegalStateException boom = new IllegalStateException("boom");
        Future<String> a = Future.failed(boom);
        Future<String> b = Future.from(new CompletableFuture<String>());
        assertSame(boom, assertThrows(IllegalStateException.class, () -> inIo(() -> Io.race(a, b))));
        assertEquals(Future.State.CANCELLED, b.state());
    }

    @Test
    void raceWrapsTheWinnersCheckedFailure() {
        IOException io = new IOException("disk");
        Future<String> a = Future.failed(io);
        CompletionException e = assertThrows(
                CompletionException.class, () -> inIo(() -> Io.race(a, Future.from(new CompletableFuture<String>()))));
        assertSame(io, e.getCause());
    }

    @Test
    void aCancelledWinnerMakesTheRaceThrowCancelled() {
        CompletableFuture<String> source = new CompletableFuture<>();
        source.cancel(false);
        Future<String> b = Future.from(new CompletableFuture<String>());
        assertThrows(Cancelled.class, () -> inIo(() -> Io.race(Future.from(source), b)));
        assertEquals(Future.State.CANCELLED, b.state());
    }

    /** Starts a task that parks until cancelled and logs when it has unwound; returns it parked. */
    private Started<String> parkedLoser(List<String> log) {
        Started<String> loser = startElsewhere(() -> {
            try {
                parkUntilCancelled();
                return "loser";
            } finally {
                log.add("loser unwound");
            }
        });
        loser.awaitParked();
        return loser;
    }

    @Test
    void theLosingTaskIsCancelledAndUnwinds() {
        List<String> log = new CopyOnWriteArrayList<>();
        Started<String> loser = parkedLoser(log);
        assertEquals("winner", inIo(() -> Io.race(loser.future(), Future.completed("winner"))));
        awaitDone(loser.future());
        assertEquals(Future.State.CANCELLED, loser.future().state());
        assertEquals(List.of("loser unwound"), log);
    }

    @Test
    void raceAndJoinReturnsOnlyAfterTheLoserHasUnwound() {
        List<String> log = new CopyOnWriteArrayList<>();
        Started<String> loser = parkedLoser(log);
        String winner = inIo(() -> Io.raceAndJoin(Future.completed("winner"), loser.future()));
        assertEquals("winner", winner);
        assertTrue(loser.future().isDone(), "raceAndJoin returned before the loser finished");
        assertEquals(List.of("loser unwound"), log);
    }

    /**
     * Starts a task parked inside a shield until {@code release} is readied, so a cancel cannot
     * finish it; returns it parked.
     */
    private Started<String> stubborn(AtomicReference<ParkToken> release) {
        Started<String> stubborn = startElsewhere(() -> Io.shield(() -> {
            ParkToken park = ParkToken.create();
            release.set(park);
            Io.current().suspendRaw(park);
            return "stubborn";
        }));
        stubborn.awaitParked();
        return stubborn;
    }

    @Test
    void raceDeregistersItsWaiterFromTheLoser() {
        AtomicReference<ParkToken> release = new AtomicReference<>();
        Started<String> stubborn = stubborn(release);
        CompletableFuture<String> source = new CompletableFuture<>();
        AtomicInteger whileRacing = new AtomicInteger(-1);
        Runnable complete = () -> {
            whileRacing.set(waiterCount(stubborn.future()));
            source.complete("quick");
        };
        assertEquals(
                "quick", inIoWhenItParks("completer", complete, () -> Io.race(stubborn.future(), Future.from(source))));
        assertFalse(stubborn.future().isDone());
        assertEquals(1, whileRacing.get(), "the parked race was registered on the loser");
        assertEquals(0, waiterCount(stubborn.future()), "the race left its waiter on the loser");
        io.ready(release.get());
        awaitDone(stubborn.future());
        assertEquals(
                Future.State.CANCELLED, stubborn.future().state(), "the race cancelled it; the shield deferred that");
    }

    @Test
    void raceAndJoinOfALoserThatAwaitsTheRacerIsNoDeadlock() {
        CompletableFuture<Future<?>> racerHandle = new CompletableFuture<>();
        Started<Object> loser =
                startElsewhere(() -> Future.from(racerHandle).await().await());
        loser.awaitParked();
        Started<String> racer = startElsewhere(() -> {
            racerHandle.complete(Io.currentTask().orElseThrow());
            loser.awaitParked(); // the loser now awaits this racer
            return (String) Io.<Object>raceAndJoin(loser.future(), Future.completed("winner"));
        });
        // Joining the cancelled loser waits for a task that awaits the racer: no deadlock, since
        // the loser is woken by its cancellation and unwinds.
        assertEquals("winner", inIo(() -> racer.future().await()));
        assertEquals(Future.State.CANCELLED, loser.future().state());
    }

    @Test
    void aCancelledRacerCancelsBothInputsAndThrowsCancelled() {
        Future<String> a = Future.from(new CompletableFuture<String>());
        Future<String> b = Future.from(new CompletableFuture<String>());
        AtomicReference<Throwable> seen = new AtomicReference<>();
        Started<String> racer = startElsewhere(() -> {
            try {
                return Io.race(a, b);
            } catch (Throwable t) {
                seen.set(t);
                throw t;
            }
        });
        racer.awaitParked();
        racer.future().cancel();
        awaitDone(racer.future());
        assertTrue(seen.get() instanceof Cancelled, "race threw " + seen.get());
        assertEquals(Future.State.CANCELLED, racer.future().state());
        assertEquals(Future.State.CANCELLED, a.state());
        assertEquals(Future.State.CANCELLED, b.state());
    }

    @Test
    void aCancelledRacerLeavesNoWaiterOnInputsThatOutliveIt() {
        AtomicReference<ParkToken> releaseA = new AtomicReference<>();
        AtomicReference<ParkToken> releaseB = new AtomicReference<>();
        Started<String> a = stubborn(releaseA);
        Started<String> b = stubborn(releaseB);
        Started<String> racer = startElsewhere(() -> Io.race(a.future(), b.future()));
        racer.awaitParked();
        eventually().until(() -> waiterCount(a.future()) == 1 && waiterCount(b.future()) == 1);
        racer.future().cancel();
        awaitDone(racer.future());
        assertEquals(Future.State.CANCELLED, racer.future().state());
        assertFalse(a.future().isDone() || b.future().isDone(), "the shields hold both inputs");
        assertEquals(0, waiterCount(a.future()), "the cancelled race left its waiter on a");
        assertEquals(0, waiterCount(b.future()), "the cancelled race left its waiter on b");
        io.ready(releaseA.get());
        io.ready(releaseB.get());
        awaitDone(a.future());
        awaitDone(b.future());
        assertEquals(Future.State.CANCELLED, a.future().state(), "the race cancelled a; the shield deferred that");
        assertEquals(Future.State.CANCELLED, b.future().state(), "the race cancelled b; the shield deferred that");
    }

    @Test
    void inputsCompletingAtOnceFromTwoThreadsEndTheRaceWithOneOfThem() {
        for (int round = 0; round < 100; round++) {
            CompletableFuture<String> sourceA = new CompletableFuture<>();
            CompletableFuture<String> sourceB = new CompletableFuture<>();
            Future<String> a = Future.from(sourceA);
            Future<String> b = Future.from(sourceB);
            CountDownLatch racerParked = new CountDownLatch(1);
            CyclicBarrier atOnce = new CyclicBarrier(2);
            helper("complete-a", () -> {
                racerParked.await();
                atOnce.await();
                sourceA.complete("a");
            });
            helper("complete-b", () -> {
                racerParked.await();
                atOnce.await();
                sourceB.complete("b");
            });
            String winner = inIoWhenItParks("racer-parked", racerParked::countDown, () -> Io.race(a, b));
            Future<String> won = winner.equals("a") ? a : b;
            Future<String> lost = won == a ? b : a;
            assertEquals(Future.State.SUCCESS, won.state(), "round " + round + ": the race returned " + winner);
            assertEquals(winner, won.resultNow(), "round " + round);
            // the loser completes too (it may still be recording its value), unless the race's cancel got there first
            awaitDone(lost);
            Future.State loser = lost.state();
            assertTrue(
                    loser == Future.State.SUCCESS || loser == Future.State.CANCELLED, "round " + round + ": " + loser);
        }
    }

    @Test
    void anAwaitOfARacerThatRacesTheAwaiterIsNoCycleWhileTheRaceHasAnotherInput() {
        CompletableFuture<Future<?>> racerHandle = new CompletableFuture<>();
        CompletableFuture<String> other = new CompletableFuture<>();
        Started<Object> awaiter =
                startElsewhere(() -> Future.from(racerHandle).await().await());
        awaiter.awaitParked();
        Started<Object> racer = startElsewhere(() -> {
            racerHandle.complete(Io.currentTask().orElseThrow());
            return Io.<Object>race(awaiter.future(), Future.from(other));
        });
        racer.awaitParked();
        // the awaiter awaits the racer, which waits for the awaiter or `other`: not a deadlock
        eventually().until(() -> awaiter.future().isDone() || waiterCount(racer.future()) == 1);
        assertEquals(
                Future.State.PENDING,
                awaiter.future().state(),
                () -> "an await through a race with another input was taken for a cycle: "
                        + awaiter.future().exceptionNow());
        other.complete("the other input");
        assertEquals("the other input", inIo(() -> racer.future().await()));
        awaitDone(awaiter.future());
        assertEquals(Future.State.CANCELLED, awaiter.future().state(), "the race cancelled its losing input");
    }

    @Test
    void aChildRacingItsParentIsWonByTheOtherInputAndCancelsTheParent() {
        CompletableFuture<String> other = new CompletableFuture<>();
        AtomicReference<Future<Object>> child = new AtomicReference<>();
        AtomicReference<Thread> childThread = new AtomicReference<>();
        // Inline, the child runs inside the parent's async: the parent cannot end before it, so
        // only the other input can win; scheduled, the parent awaits the child.
        Started<String> parent = startElsewhere(() -> {
            Future<?> self = Io.currentTask().orElseThrow();
            Future<Object> racing = Io.async(() -> {
                childThread.set(Thread.currentThread());
                return Io.race(self, Future.from(other));
            });
            child.set(racing);
            return "the parent saw " + racing.await();
        });
        eventually().until(() -> childThread.get() != null);
        awaitParked(childThread.get());
        other.complete("the other input");
        awaitDone(parent.future());
        eventually().until(() -> child.get() != null && child.get().isDone());
        assertEquals("the other input", child.get().resultNow());
        assertEquals(
                Future.State.CANCELLED, parent.future().state(), "the race cancelled its losing input, the parent");
    }

    /**
     * Inline, a child runs inside its parent's async, which runs inside the grandparent's: a race of
     * the two can have no first input, and raceAndJoin with one of them could never join it as the
     * loser. Both fail at once (they parked for good before). A scheduling Io starts these tasks on
     * fibers of their own unless an awaiter runs them in place; FiberIo's in-place case is
     * TasksBeforeThreadsTest's.
     */
    @Test
    void racingTwoTasksThatRunTheRacerInlineFailsInsteadOfHanging() {
        assumeTrue(runsTasksInline(), "the tasks may start on fibers of their own, not inside one another");
        List<String> failures = new CopyOnWriteArrayList<>();
        Future<String> grandparent = inIo(() -> Io.async(() -> {
            Future<?> g = Io.currentTask().orElseThrow();
            return Io.async(() -> {
                        Future<?> p = Io.currentTask().orElseThrow();
                        for (boolean join : new boolean[] {false, true}) {
                            Future<Object> child = Io.async(() ->
                                    join ? Io.raceAndJoin(p, Future.from(new CompletableFuture<>())) : Io.race(p, g));
                            failures.add(child.exceptionNow().getMessage());
                        }
                        return "the parent went on";
                    })
                    .await();
        }));
        assertEquals("the parent went on", inIo(grandparent::await));
        assertEquals(2, failures.size(), failures::toString);
        assertTrue(failures.get(0).contains("neither can finish before it does"), failures.get(0));
        assertTrue(failures.get(1).contains("could never be joined as the loser"), failures.get(1));
    }

    @Test
    void aRacerAlreadyCancelledCancelsTheInputsWithoutWaiting() {
        Future<String> a = Future.from(new CompletableFuture<String>());
        Future<String> b = Future.from(new CompletableFuture<String>());
        Future<String> racer = inIo(() -> Io.async(() -> {
            Io.currentTask().orElseThrow().cancel();
            return Io.race(a, b);
        }));
        awaitDone(racer);
        assertEquals(Future.State.CANCELLED, racer.state());
        assertEquals(Future.State.CANCELLED, a.state());
        assertEquals(Future.State.CANCELLED, b.state());
    }

    @Test
    void racingTheSameFutureTwiceReturnsItsValue() {
        Future<String> f = inIo(() -> Io.async(() -> "same"));
        assertEquals("same", inIo(() -> Io.race(f, f)));
    }
}
