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
import io.weft.TimedOut;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Futures#timeout} and {@link Futures#timeoutOrDefault}. */
class TimeoutTest {
    private static final Duration FOREVER = Duration.ofHours(1);

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aBodyInTimeReturnsItsValue(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            int value = opened.call(() -> Futures.timeout(FOREVER, () -> {
                Io.sleep(Duration.ofMillis(5));
                return 42;
            }));
            assertEquals(42, value);
            assertEquals(7, (int) opened.call(() -> Futures.timeoutOrDefault(FOREVER, () -> 7, -1)));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.combinators.Kinds#timed")
    void aLateBodyTimesOutAndItsFinallyRanBeforeTimeoutReturns(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicBoolean finallyRan = new AtomicBoolean();
            List<Object> seen = opened.call(() -> {
                long start = Io.current().nowMs();
                TimedOut timedOut = assertThrows(
                        TimedOut.class,
                        () -> Futures.timeout(Duration.ofMillis(100), () -> {
                            try {
                                Io.sleep(FOREVER);
                                return 1;
                            } finally {
                                finallyRan.set(true);
                            }
                        }));
                return List.of(timedOut, finallyRan.get(), Io.current().nowMs() - start);
            });
            assertInstanceOf(TimedOut.class, seen.get(0));
            assertEquals(true, seen.get(1), "the body's finally ran before timeout returned");
            if (kind.virtualClock()) {
                // FiberIo cancels the body at the deadline; BlockingIo can only judge it afterwards.
                assertEquals(kind.inline() ? FOREVER.toMillis() : 100L, seen.get(2));
            } else {
                assertTrue((long) seen.get(2) >= 100L, "timed out early: " + seen.get(2));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.combinators.Kinds#timed")
    void timeoutOrDefaultReturnsTheFallbackAtTheDeadline(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            String value = opened.call(() -> Futures.timeoutOrDefault(
                    Duration.ofMillis(50),
                    () -> {
                        Io.sleep(FOREVER);
                        return "late";
                    },
                    "fallback"));
            assertEquals("fallback", value);
            assertNull(opened.call(() -> Futures.timeoutOrDefault(
                    Duration.ofMillis(50),
                    () -> {
                        Io.sleep(FOREVER);
                        return "late";
                    },
                    null)));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.combinators.Kinds#virtual")
    void theDeadlineIsExactOnTheVirtualClock(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<String> outcomes = opened.call(() -> List.of(
                    Futures.timeoutOrDefault(
                            Duration.ofMillis(100),
                            () -> {
                                Io.sleep(Duration.ofMillis(99));
                                return "in time";
                            },
                            "late"),
                    Futures.timeoutOrDefault(
                            Duration.ofMillis(100),
                            () -> {
                                Io.sleep(Duration.ofMillis(101));
                                return "in time";
                            },
                            "late")));
            assertEquals(List.of("in time", "late"), outcomes);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void theBodysOwnFailuresPropagateUnchanged(Ios.Kind kind) {
        TimedOut inner = new TimedOut("the body's own timeout");
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            assertSame(
                    inner,
                    assertThrows(
                            TimedOut.class,
                            () -> opened.call(() -> Futures.timeoutOrDefault(
                                    FOREVER,
                                    () -> {
                                        throw inner;
                                    },
                                    "fallback"))));
            assertSame(
                    boom,
                    assertThrows(
                            IllegalStateException.class,
                            () -> opened.call(() -> Futures.timeout(FOREVER, () -> {
                                throw boom;
                            }))));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void cancellingTheCallerCancelsAndJoinsTheBody(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicBoolean finallyRan = new AtomicBoolean();
            AtomicReference<Boolean> finallyRanWhenCallerEnded = new AtomicReference<>();
            Future.State callerState = opened.call(() -> {
                CompletableFuture<Void> bodyRunning = new CompletableFuture<>();
                Future<Object> caller = Io.async(() -> {
                    try {
                        return Futures.timeout(FOREVER, () -> {
                            try {
                                bodyRunning.complete(null);
                                Io.sleep(FOREVER);
                                return null;
                            } finally {
                                finallyRan.set(true);
                            }
                        });
                    } finally {
                        finallyRanWhenCallerEnded.set(finallyRan.get());
                    }
                });
                Future.from(bodyRunning).await();
                caller.cancel();
                assertThrows(Cancelled.class, caller::await);
                return caller.state();
            });
            assertEquals(Future.State.CANCELLED, callerState);
            assertEquals(true, finallyRanWhenCallerEnded.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void nullArgumentsAreRejectedByName(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                assertEquals(
                        "duration",
                        assertThrows(NullPointerException.class, () -> Futures.timeout(null, () -> 1))
                                .getMessage());
                assertEquals(
                        "body",
                        assertThrows(NullPointerException.class, () -> Futures.timeoutOrDefault(FOREVER, null, 1))
                                .getMessage());
                return null;
            });
        }
    }
    /**
     * A negative duration used to time out a body that an inline Io had run to completion at
     * once, where a zero one let it through: both leave no time, and are the same.
     */
    @ParameterizedTest
    @MethodSource("inline")
    void aNegativeDurationIsTreatedAsZero(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                for (Duration none : List.of(Duration.ZERO, Duration.ofMillis(-5))) {
                    assertEquals("at once", Futures.timeout(none, () -> "at once"), none.toString());
                }
                return null;
            });
        }
    }

    /**
     * A duration a fraction of a millisecond past Long.MAX_VALUE milliseconds was rounded up to
     * Long.MIN_VALUE, which left no time at all: a body that took a millisecond timed out. Huge
     * durations saturate, as every other timeout's do.
     */
    @ParameterizedTest
    @MethodSource("inline")
    void aHugeDurationJustPastTheLastMillisecondDoesNotWrapToNone(Ios.Kind kind) {
        Duration huge = Duration.ofMillis(Long.MAX_VALUE).plusNanos(1);
        try (Ios.Opened opened = Ios.open(kind)) {
            String out = opened.call(() -> Futures.timeout(huge, () -> {
                Io.sleep(Duration.ofMillis(5));
                return "in time";
            }));
            assertEquals("in time", out);
        }
        assertEquals(Long.MAX_VALUE, Futures.ceilMillis(huge));
    }

    /**
     * The inline Io with a virtual clock: a body completes at once, inside the call, and no
     * millisecond ticks over meanwhile (with a real clock one may, which times a zero out too).
     */
    static Stream<Named<Ios.Kind>> inline() {
        return Ios.all()
                .filter(named ->
                        named.getPayload().inline() && named.getPayload().virtualClock());
    }
}
