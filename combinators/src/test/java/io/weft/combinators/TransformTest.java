package io.weft.combinators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.testing.Ios;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Futures#map}, {@link Futures#flatMap}, {@link Futures#zip}, {@link Futures#whenComplete}. */
class TransformTest {

    /** Waits for {@code future} to be done (the result is checked by the caller). */
    private static <T> Future<T> settled(Future<T> future) {
        Io.shield(() -> {
            try {
                future.await();
            } catch (RuntimeException ignored) {
                // the outcome is checked by the caller
            }
        });
        return future;
    }

    private static <T> Future<T> pending() {
        return Future.from(new CompletableFuture<T>());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void mapAndFlatMapApplyTheirFunctions(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Object> values = opened.call(() -> List.of(
                    Futures.map(Io.async(() -> 2), x -> x * 3).await(),
                    Futures.flatMap(Future.completed(2), x -> Io.async(() -> x + 1))
                            .await(),
                    Futures.zip(Io.async(() -> 1), Future.completed("a"), (i, s) -> s + i)
                            .await()));
            assertEquals(List.of(6, 3, "a1"), values);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void failuresAndCancellationsOfTheSourcePropagate(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> cancelled = pending();
            cancelled.cancel();
            List<Future<Integer>> results = opened.call(() -> List.of(
                    settled(Futures.map(Future.<Integer>failed(boom), x -> x + 1)),
                    settled(Futures.map(cancelled, x -> x + 1)),
                    settled(Futures.flatMap(Future.completed(1), x -> Future.<Integer>failed(boom))),
                    settled(Futures.map(Future.completed(1), x -> {
                        throw boom;
                    }))));
            assertSame(boom, results.get(0).exceptionNow());
            assertEquals(Future.State.CANCELLED, results.get(1).state());
            assertSame(boom, results.get(2).exceptionNow());
            assertSame(boom, results.get(3).exceptionNow());
            Future<Integer> nullInner = opened.call(() -> settled(Futures.flatMap(Future.completed(1), x -> null)));
            assertInstanceOf(NullPointerException.class, nullInner.exceptionNow());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void cancellingAMappedFutureLeavesTheSourceAlone(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> source = pending();
            Future<Integer> mapped = opened.call(() -> {
                Future<Integer> m = Futures.map(source, x -> x + 1);
                m.cancel();
                assertThrows(Cancelled.class, m::await);
                return m;
            });
            assertEquals(Future.State.CANCELLED, mapped.state());
            assertEquals(Future.State.PENDING, source.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void cancellingAFlatMappedFutureCancelsTheInnerFutureButNotTheSource(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            CompletableFuture<Future<Integer>> made = new CompletableFuture<>();
            Future<Integer> source = Future.completed(1);
            Future<Integer> result = opened.call(() -> {
                Future<Integer> r = Futures.flatMap(source, x -> {
                    Future<Integer> inner = pending();
                    made.complete(inner);
                    return inner;
                });
                Future<Integer> inner = Future.from(made).await();
                r.cancel();
                assertThrows(Cancelled.class, r::await);
                return r;
            });
            assertEquals(Future.State.CANCELLED, result.state());
            assertEquals(Future.State.CANCELLED, made.join().state());
            assertEquals(Future.State.SUCCESS, source.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void zipFailsFastWithoutCancellingEitherInput(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<Integer> slow = pending();
            Future<String> zipped = opened.call(() -> {
                Future<String> z = Futures.zip(slow, Future.<Integer>failed(boom), (a, b) -> "never");
                assertThrows(IllegalStateException.class, z::await);
                return z;
            });
            assertSame(boom, zipped.exceptionNow());
            assertEquals(Future.State.PENDING, slow.state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void whenCompleteSeesTheOutcomeAndPassesItOn(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        IOException checked = new IOException("checked");
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicReferenceArray<Object> seen = new AtomicReferenceArray<>(4);
            Future<Integer> cancelled = pending();
            cancelled.cancel();
            List<Future<Integer>> results = opened.call(() -> {
                List<Future<Integer>> r = new ArrayList<>();
                r.add(Futures.whenComplete(Future.completed(5), (v, e) -> seen.set(0, List.of(v, String.valueOf(e)))));
                r.add(Futures.whenComplete(Future.failed(boom), (v, e) -> seen.set(1, e)));
                r.add(Futures.whenComplete(Future.failed(checked), (v, e) -> seen.set(2, e)));
                r.add(Futures.whenComplete(cancelled, (v, e) -> seen.set(3, e.getClass())));
                r.forEach(TransformTest::settled);
                return r;
            });
            assertEquals(
                    List.of(List.of(5, "null"), boom, checked, Cancelled.class),
                    List.of(seen.get(0), seen.get(1), seen.get(2), seen.get(3)));
            assertEquals(5, results.get(0).resultNow());
            assertSame(boom, results.get(1).exceptionNow());
            assertSame(checked, results.get(2).exceptionNow());
            assertEquals(Future.State.CANCELLED, results.get(3).state());
        }
    }

    /**
     * A checked failure used to reach the result wrapped: the task's await of the input wraps it
     * in a CompletionException of its own, which the task then failed with. The javadoc says
     * the result fails with the same exception, as whenComplete's already did.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aCheckedFailureReachesTheResultAsTheSameInstance(Ios.Kind kind) {
        IOException checked = new IOException("checked");
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Future<Integer>> results = opened.call(() -> {
                Future<Integer> failed = Future.failed(checked);
                return List.of(
                        settled(Futures.map(failed, x -> x)),
                        settled(Futures.flatMap(failed, Future::completed)),
                        settled(Futures.flatMap(Future.completed(1), x -> failed)),
                        settled(Futures.zip(failed, Future.completed(1), Integer::sum)),
                        settled(Futures.zip(Future.completed(1), failed, Integer::sum)));
            });
            for (Future<Integer> result : results) {
                assertSame(checked, result.exceptionNow(), result.toString());
            }
        }
    }

    /**
     * The whenComplete task parked for its source, the source's value readied it, and the task
     * was cancelled before it ran again: its await threw the task's own Cancelled and the action
     * was told the source had been cancelled. The source was done first: the action sees its
     * value. (With one worker the cancel lands in that window every time; with more, w may not
     * have started, and then its action does not run at all.)
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void aCancelAfterTheSourcesValueStillShowsTheActionTheValue(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Object> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
            Future<String> observer = opened.call(() -> {
                CompletableFuture<String> stage = new CompletableFuture<>();
                Future<String> w = Futures.whenComplete(Future.from(stage), (v, e) -> seen.add(e == null ? v : e));
                Io.yield(); // w runs and parks for the source
                stage.complete("value");
                w.cancel();
                return settled(w);
            });
            // with more workers the cancel may land before w even starts: then its action never runs
            assertTrue(seen.stream().allMatch("value"::equals), seen::toString);
            if (kind.name().contains("1 worker")) { // one worker: w parks first, every time
                assertEquals(List.of("value"), seen);
            }
            assertTrue(observer.state() == Future.State.CANCELLED || "value".equals(observer.resultNow()));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aThrowingActionFailsASuccessfulResultAndIsSuppressedOnAFailedOne(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalArgumentException fromAction = new IllegalArgumentException("action");
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Future<Integer>> results = opened.call(() -> List.of(
                    settled(Futures.whenComplete(Future.completed(1), (v, e) -> {
                        throw fromAction;
                    })),
                    settled(Futures.whenComplete(Future.<Integer>failed(boom), (v, e) -> {
                        throw fromAction;
                    }))));
            assertSame(fromAction, results.get(0).exceptionNow());
            assertSame(boom, results.get(1).exceptionNow());
            assertSame(fromAction, boom.getSuppressed()[0]);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void nullArgumentsAreRejectedByName(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Future<Integer> one = Future.completed(1);
                assertEquals(
                        "source",
                        assertThrows(NullPointerException.class, () -> Futures.map(null, x -> x))
                                .getMessage());
                assertEquals(
                        "fn",
                        assertThrows(NullPointerException.class, () -> Futures.flatMap(one, null))
                                .getMessage());
                assertEquals(
                        "b",
                        assertThrows(NullPointerException.class, () -> Futures.zip(one, null, (x, y) -> x))
                                .getMessage());
                assertEquals(
                        "action",
                        assertThrows(NullPointerException.class, () -> Futures.whenComplete(one, null))
                                .getMessage());
                assertNull(Futures.map(Future.completed(1), x -> null).await());
                return null;
            });
        }
    }
}
