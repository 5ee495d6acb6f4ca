package io.weft.combinators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.testing.Ios;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Futures#race}, {@link Futures#all} and {@link Futures#any}. */
class WaitingOperatorsTest {

    private static <T> Future<T> pending() {
        return Future.from(new CompletableFuture<T>());
    }

    // ---------------------------------------------------------------- race

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void raceTiesGoToTheLowestIndex(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            for (LoserPolicy policy : LoserPolicy.values()) {
                int winner = opened.call(() -> Futures.race(
                        List.of(Future.completed(1), Future.completed(2), Future.failed(new IllegalStateException())),
                        policy));
                assertEquals(1, winner);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void raceReturnsTheFirstToCompleteAndCancelsTheLosers(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            for (LoserPolicy policy : LoserPolicy.values()) {
                Future<String> slow = pending();
                Future<String> slower = pending();
                String winner = opened.call(() -> Futures.race(List.of(slow, Io.async(() -> "fast"), slower), policy));
                assertEquals("fast", winner);
                assertEquals(Future.State.CANCELLED, slow.state());
                assertEquals(Future.State.CANCELLED, slower.state());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void raceWakesWhenAPendingInputCompletesFromAnotherThread(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            CompletableFuture<String> source = new CompletableFuture<>();
            Future<String> first = pending();
            Future<String> second = Future.from(source);
            Elsewhere<String> racer = Elsewhere.start(
                    opened.io(), () -> Futures.race(List.of(first, second), LoserPolicy.RETURN_AT_WINNER));
            racer.task();
            racer.awaitParkedIn(Futures.class, "race");
            source.complete("second");
            assertEquals("second", racer.outcome());
            assertEquals(Future.State.CANCELLED, first.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void raceRethrowsTheWinnersFailureAsTheSameInstance(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<String> loser = pending();
            RuntimeException thrown = assertThrows(
                    RuntimeException.class,
                    () -> opened.call(() ->
                            Futures.race(List.of(Future.<String>failed(boom), loser), LoserPolicy.RETURN_AT_WINNER)));
            assertSame(boom, thrown);
            assertEquals(Future.State.CANCELLED, loser.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void joinLosersWaitsForTheLosersFinally(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicBoolean loserFinallyRan = new AtomicBoolean();
            List<Object> seen = opened.call(() -> {
                Future<String> loser = Io.async(() -> {
                    try {
                        Io.sleep(Duration.ofHours(1));
                        return "loser";
                    } finally {
                        Io.shield(() -> Io.sleep(Duration.ofMillis(20))); // a slow cleanup
                        loserFinallyRan.set(true);
                    }
                });
                Future<String> winner = Io.async(() -> {
                    Io.sleep(Duration.ofMillis(10));
                    return "winner";
                });
                String value = Futures.race(List.of(loser, winner), LoserPolicy.JOIN_LOSERS);
                return List.of(value, loserFinallyRan.get(), loser.state());
            });
            assertEquals(List.of("winner", true, Future.State.CANCELLED), seen);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aCancelledRacerCancelsEveryInput(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<String> a = pending();
            Future<String> b = pending();
            Future.State racer = opened.call(() -> {
                Future<String> task = Io.async(() -> {
                    Io.currentTask().orElseThrow().cancel();
                    return Futures.race(List.of(a, b), LoserPolicy.RETURN_AT_WINNER);
                });
                assertThrows(Cancelled.class, task::await);
                return task.state();
            });
            assertEquals(Future.State.CANCELLED, racer);
            assertEquals(Future.State.CANCELLED, a.state());
            assertEquals(Future.State.CANCELLED, b.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aRacerCancelledWhileParkedCancelsEveryInput(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<String> a = pending();
            Future<String> b = pending();
            Elsewhere<String> racer =
                    Elsewhere.start(opened.io(), () -> Futures.race(List.of(a, b), LoserPolicy.JOIN_LOSERS));
            racer.awaitParkedIn(Futures.class, "race");
            racer.task().cancel();
            assertInstanceOf(Cancelled.class, racer.outcome());
            assertEquals(Future.State.CANCELLED, a.state());
            assertEquals(Future.State.CANCELLED, b.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void raceRejectsBadInput(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                assertEquals(
                        "futures",
                        assertThrows(NullPointerException.class, () -> Futures.race(null, LoserPolicy.JOIN_LOSERS))
                                .getMessage());
                assertEquals(
                        "futures[1]",
                        assertThrows(
                                        NullPointerException.class,
                                        () -> Futures.race(
                                                Arrays.asList(Future.completed(1), null), LoserPolicy.JOIN_LOSERS))
                                .getMessage());
                assertEquals(
                        "policy",
                        assertThrows(NullPointerException.class, () -> Futures.race(List.of(Future.completed(1)), null))
                                .getMessage());
                assertThrows(IllegalArgumentException.class, () -> Futures.race(List.of(), LoserPolicy.JOIN_LOSERS));
                Future<?> self = Io.currentTask().orElseThrow();
                assertThrows(
                        IllegalStateException.class, () -> Futures.race(List.of(self), LoserPolicy.RETURN_AT_WINNER));
                return null;
            });
        }
    }

    // ---------------------------------------------------------------- all

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void allReturnsEveryValueInInputOrder(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Integer> values = opened.call(() -> Futures.all(List.of(
                    Io.async(() -> {
                        Io.sleep(Duration.ofMillis(3));
                        return 1;
                    }),
                    Io.async(() -> 2),
                    Future.completed(3))));
            assertEquals(List.of(1, 2, 3), values);
            assertEquals(List.of(), opened.call(() -> Futures.all(List.<Future<Integer>>of())));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void allFailsFastAndCancelsTheRest(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> rest = pending();
            RuntimeException thrown = assertThrows(
                    RuntimeException.class,
                    () -> opened.call(() -> Futures.all(List.of(
                            Io.async(() -> 1),
                            Io.<Integer>async(() -> {
                                throw boom;
                            }),
                            rest))));
            assertSame(boom, thrown);
            assertEquals(Future.State.CANCELLED, rest.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void allFailsAtTheFirstFailureWhileOthersArePending(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> slow = pending();
            CompletableFuture<Integer> source = new CompletableFuture<>();
            Elsewhere<List<Integer>> waiter =
                    Elsewhere.start(opened.io(), () -> Futures.all(List.of(slow, Future.from(source))));
            waiter.awaitParkedIn(Futures.class, "all");
            IOException io = new IOException("io");
            source.completeExceptionally(io);
            CompletionException thrown = assertInstanceOf(CompletionException.class, waiter.outcome());
            assertSame(io, thrown.getCause());
            assertEquals(Future.State.CANCELLED, slow.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void allOfACancelledInputThrowsCancelled(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> cancelled = pending();
            cancelled.cancel();
            assertThrows(
                    Cancelled.class, () -> opened.call(() -> Futures.all(List.of(Future.completed(1), cancelled))));
        }
    }

    // ---------------------------------------------------------------- any

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anyReturnsTheFirstSuccessAndCancelsTheRest(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> rest = pending();
            int value = opened.call(() ->
                    Futures.any(List.of(Future.failed(new IllegalStateException("no")), Io.async(() -> 5), rest)));
            assertEquals(5, value);
            assertEquals(Future.State.CANCELLED, rest.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anySkipsFailuresUntilASuccessArrives(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            CompletableFuture<String> failing = new CompletableFuture<>();
            CompletableFuture<String> succeeding = new CompletableFuture<>();
            Elsewhere<String> waiter = Elsewhere.start(
                    opened.io(), () -> Futures.any(List.of(Future.from(failing), Future.from(succeeding))));
            waiter.awaitParkedIn(Futures.class, "any");
            failing.completeExceptionally(new IllegalStateException("first"));
            succeeding.complete("ok");
            assertEquals("ok", waiter.outcome());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anyWhenAllFailCarriesEveryFailureAsSuppressed(Ios.Kind kind) {
        IllegalStateException first = new IllegalStateException("first");
        IOException second = new IOException("second");
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> cancelled = pending();
            cancelled.cancel();
            CompletionException thrown = assertThrows(
                    CompletionException.class,
                    () -> opened.call(() -> Futures.any(List.of(
                            Future.<Integer>failed(first),
                            Io.<Integer>async(() -> {
                                throw second;
                            }),
                            cancelled))));
            Throwable[] suppressed = thrown.getSuppressed();
            assertEquals(3, suppressed.length);
            assertSame(first, suppressed[0]);
            assertSame(second, suppressed[1]);
            assertInstanceOf(Cancelled.class, suppressed[2]);
        }
    }

    @ParameterizedTest
    @EnumSource(names = {"ANY", "ALL"})
    void emptyAndNullListsAreHandledAsDocumented(Operator operator) {
        if (operator == Operator.ANY) {
            assertThrows(IllegalArgumentException.class, () -> Futures.any(List.of()));
            assertEquals(
                    "futures",
                    assertThrows(NullPointerException.class, () -> Futures.any(null))
                            .getMessage());
        } else {
            assertTrue(Futures.all(List.of()).isEmpty());
            assertEquals(
                    "futures",
                    assertThrows(NullPointerException.class, () -> Futures.all(null))
                            .getMessage());
            assertEquals(
                    "futures[0]",
                    assertThrows(NullPointerException.class, () -> Futures.all(Arrays.asList((Future<Integer>) null)))
                            .getMessage());
        }
    }

    enum Operator {
        ANY,
        ALL
    }
}
