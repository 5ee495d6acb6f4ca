package io.weft.combinators;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
import java.util.SplittableRandom;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Futures#retry} and {@link RetryPolicy}. */
class RetryTest {

    private static RetryPolicy noJitter(int attempts) {
        return RetryPolicy.builder()
                .maxAttempts(attempts)
                .initialDelay(Duration.ofMillis(100))
                .multiplier(2)
                .build();
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void attemptsRunAtTheBackoffTimesOnTheIosClock(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Long> times = new CopyOnWriteArrayList<>();
            String value = opened.call(() -> {
                long start = Io.current().nowMs();
                return Futures.retry(noJitter(5), () -> {
                    times.add(Io.current().nowMs() - start);
                    if (times.size() < 3) {
                        throw new IllegalStateException("not yet");
                    }
                    return "done";
                });
            });
            assertEquals("done", value);
            assertEquals(3, times.size());
            if (kind.virtualClock()) {
                assertEquals(List.of(0L, 100L, 300L), times);
            } else { // a real clock: never early, each backoff counted from the attempt before it
                assertTrue(times.get(1) - times.get(0) >= 100, "the first backoff was short: " + times);
                assertTrue(times.get(2) - times.get(1) >= 200, "the second backoff was short: " + times);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.combinators.Kinds#virtual")
    void maxDelayCapsTheBackoff(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Long> times = new CopyOnWriteArrayList<>();
            RetryPolicy policy = RetryPolicy.builder()
                    .maxAttempts(5)
                    .initialDelay(Duration.ofMillis(100))
                    .multiplier(3)
                    .maxDelay(Duration.ofMillis(250))
                    .build();
            assertThrows(
                    IllegalStateException.class,
                    () -> opened.call(() -> Futures.retry(policy, () -> {
                        times.add(Io.current().nowMs());
                        throw new IllegalStateException("never");
                    })));
            assertEquals(List.of(0L, 100L, 350L, 600L, 850L), times);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void theLastFailureIsThrownWithTheEarlierOnesSuppressed(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicInteger attempt = new AtomicInteger();
            RetryPolicy quick = RetryPolicy.builder()
                    .maxAttempts(3)
                    .initialDelay(Duration.ofMillis(1))
                    .build();
            IllegalStateException last = assertThrows(
                    IllegalStateException.class,
                    () -> opened.call(() -> Futures.retry(quick, () -> {
                        throw new IllegalStateException("attempt " + attempt.incrementAndGet());
                    })));
            assertEquals("attempt 3", last.getMessage());
            assertEquals(2, last.getSuppressed().length);
            assertEquals("attempt 1", last.getSuppressed()[0].getMessage());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aCheckedFailureIsWrappedAndANonRetryableOneIsNotRetried(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicInteger attempts = new AtomicInteger();
            IOException io = new IOException("io");
            RetryPolicy onlyIo = RetryPolicy.builder()
                    .maxAttempts(5)
                    .initialDelay(Duration.ofMillis(1))
                    .retryOn(failure -> failure instanceof IOException)
                    .build();
            CompletionException wrapped = assertThrows(
                    CompletionException.class,
                    () -> opened.call(() ->
                            Futures.retry(RetryPolicy.builder().maxAttempts(1).build(), () -> {
                                throw io;
                            })));
            assertSame(io, wrapped.getCause());
            assertThrows(
                    IllegalStateException.class,
                    () -> opened.call(() -> Futures.retry(onlyIo, () -> {
                        attempts.incrementAndGet();
                        throw new IllegalStateException("not retryable");
                    })));
            assertEquals(1, attempts.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aCancelledBodyStopsTheRetries(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicInteger attempts = new AtomicInteger();
            RetryPolicy everything = RetryPolicy.builder()
                    .maxAttempts(5)
                    .retryOn(failure -> true)
                    .build();
            assertThrows(
                    Cancelled.class,
                    () -> opened.call(() -> Futures.retry(everything, () -> {
                        attempts.incrementAndGet();
                        throw new Cancelled("stop");
                    })));
            assertEquals(1, attempts.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.combinators.Kinds#cancellableSleep")
    void cancellingTheCallerDuringBackoffStopsTheRetries(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicInteger attempts = new AtomicInteger();
            RetryPolicy slow = RetryPolicy.builder()
                    .maxAttempts(3)
                    .initialDelay(Duration.ofHours(1))
                    .maxDelay(Duration.ofHours(2))
                    .build();
            IllegalStateException fails = new IllegalStateException("fails");
            AtomicReference<Throwable[]> carried = new AtomicReference<>();
            Elsewhere<Object> caller = Elsewhere.start(opened.io(), () -> {
                try {
                    return Futures.retry(slow, () -> {
                        attempts.incrementAndGet();
                        throw fails;
                    });
                } catch (Cancelled c) {
                    carried.set(c.getSuppressed());
                    throw c;
                }
            });
            caller.awaitParkedIn(Futures.class, "retry");
            caller.task().cancel();
            assertInstanceOf(Cancelled.class, caller.outcome());
            assertEquals(1, attempts.get());
            // the attempt's failure is not lost with the cancel (it used to be dropped)
            assertArrayEquals(new Throwable[] {fails}, carried.get());
        }
    }

    /**
     * A zero back-off has no suspend point, so a caller cancelled by its body's attempt went on
     * retrying to the last attempt and ended failed, where any positive delay stopped it with
     * Cancelled after the first. The javadoc's "stops the retries at once" now holds for both.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aCancelledCallerStopsRetryingEvenWithAZeroDelay(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicInteger attempts = new AtomicInteger();
            RetryPolicy noDelay = RetryPolicy.builder()
                    .maxAttempts(5)
                    .initialDelay(Duration.ZERO)
                    .build();
            IOException fails = new IOException("fails");
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Future.State state = opened.call(() -> {
                Future<Object> caller = Io.async(() -> {
                    try {
                        return Futures.retry(noDelay, () -> {
                            attempts.incrementAndGet();
                            Io.currentTask().orElseThrow().cancel();
                            throw fails;
                        });
                    } catch (Throwable t) {
                        thrown.set(t);
                        throw t;
                    }
                });
                Watch.joinShielded(caller);
                return caller.state();
            });
            assertEquals(Future.State.CANCELLED, state);
            assertEquals(1, attempts.get());
            assertInstanceOf(Cancelled.class, thrown.get());
            assertArrayEquals(new Throwable[] {fails}, thrown.get().getSuppressed());
        }
    }

    @Test
    void jitterStaysWithinItsFractionAndIsDeterministicForASeed() {
        RetryPolicy policy = RetryPolicy.builder()
                .initialDelay(Duration.ofMillis(100))
                .multiplier(2)
                .jitter(0.5)
                .seed(42)
                .build();
        long[] first = new long[6];
        long[] second = new long[6];
        SplittableRandom a = (SplittableRandom) policy.random().get();
        SplittableRandom b = (SplittableRandom) policy.random().get();
        for (int k = 1; k <= 6; k++) {
            long base = 100L << (k - 1);
            first[k - 1] = policy.delayAfter(k, a).toMillis();
            second[k - 1] = policy.delayAfter(k, b).toMillis();
            assertTrue(first[k - 1] >= base / 2 && first[k - 1] <= base * 3 / 2, k + ": " + first[k - 1]);
        }
        assertArrayEquals(first, second);
        long[] unjittered = {100, 200, 400, 800, 1600, 3200};
        assertNotEquals(Arrays.toString(unjittered), Arrays.toString(first), "jitter changed nothing");
    }

    @Test
    void invalidPoliciesAreRejected() {
        assertThrows(
                IllegalArgumentException.class,
                () -> RetryPolicy.builder().maxAttempts(0).build());
        assertThrows(
                IllegalArgumentException.class,
                () -> RetryPolicy.builder().multiplier(0.5).build());
        assertThrows(
                IllegalArgumentException.class,
                () -> RetryPolicy.builder().jitter(1.5).build());
        assertThrows(
                IllegalArgumentException.class,
                () -> RetryPolicy.builder().initialDelay(Duration.ofMillis(-1)).build());
        assertThrows(
                IllegalArgumentException.class,
                () -> RetryPolicy.builder()
                        .initialDelay(Duration.ofSeconds(2))
                        .maxDelay(Duration.ofSeconds(1))
                        .build());
        assertEquals(
                "policy",
                assertThrows(NullPointerException.class, () -> Futures.retry(null, () -> 1))
                        .getMessage());
        assertEquals(
                "body",
                assertThrows(NullPointerException.class, () -> Futures.retry(noJitter(1), null))
                        .getMessage());
    }
}
