package io.weft.combinators;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.blocking.BlockingIo;
import io.weft.fiber.FiberIo;
import io.weft.reactive.Inbox;
import io.weft.reactive.Reactive;
import io.weft.testing.Ios;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 13, part 1: a Scope stops its owner, not only its children (kotlinx's coroutineScope):
 * a failing child or a passed deadline makes the owner's next suspend point throw, join/close
 * turn that into the outcome (the failure itself, or TimedOut) with the other failures
 * suppressed, and the owner's cancellation ends with the scope. Supervisors report what nobody saw.
 */
class ScopeOwnerTest {
    private static final Duration HOUR = Duration.ofHours(1);
    /** On any clock, an owner that slept this long did not wake at the failure. */
    private static final long MUCH_LESS_THAN_AN_HOUR_MS = Duration.ofMinutes(10).toMillis();

    private static <T> T fail(RuntimeException e) {
        throw e;
    }

    /** Sleeps an hour; if a scope stops it, throws the cause it was stopped for, not the Cancelled. */
    private static Void sleepAndUnwrapWhatStopsIt() {
        try {
            Io.sleep(HOUR);
            return null;
        } catch (Cancelled c) {
            throw (RuntimeException) c.getCause();
        }
    }

    /**
     * {@code failure} unwound a try-with-resources block and close added its wrapper of the same
     * failure (not the failure itself, which would be self-suppression).
     */
    private static void assertCarriesOneWrapperOfItself(Throwable failure) {
        assertEquals(1, failure.getSuppressed().length);
        assertInstanceOf(CompletionException.class, failure.getSuppressed()[0]);
        assertSame(failure, failure.getSuppressed()[0].getCause());
    }

    // ------------------------------------------------------------ a failing child stops the owner

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFailingChildWakesTheSleepingOwnerWithCancelledCausedByTheFailure(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        AtomicReference<Cancelled> atSleep = new AtomicReference<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            long slept = opened.call(() -> {
                long before = Io.current().nowMs();
                RuntimeException out = assertThrows(RuntimeException.class, () -> {
                    try (Scope scope = Scope.open()) {
                        scope.fork(() -> {
                            Io.sleep(Duration.ofMillis(5));
                            return fail(boom);
                        });
                        try {
                            Io.sleep(HOUR); // the owner is elsewhere, not in join
                        } catch (Cancelled c) {
                            atSleep.set(c);
                            throw c;
                        }
                    }
                });
                // try-with-resources keeps the block's exception; close adds a wrapper of boom, not
                // boom itself (it might be the very exception unwinding the block)
                assertSame(atSleep.get(), out);
                assertEquals(1, out.getSuppressed().length);
                assertInstanceOf(CompletionException.class, out.getSuppressed()[0]);
                assertSame(boom, out.getSuppressed()[0].getCause());
                return Io.current().nowMs() - before;
            });
            assertSame(boom, atSleep.get().getCause());
            assertTrue(slept < MUCH_LESS_THAN_AN_HOUR_MS, "the owner slept " + slept + " ms");
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void theBlockFormTurnsTheOwnersCancellationIntoTheFailureItself(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(
                    RuntimeException.class,
                    () -> Scope.call(scope -> {
                        scope.fork(() -> fail(boom));
                        Io.sleep(HOUR);
                        return "never";
                    })));
            assertSame(boom, out);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void afterTheScopeTheOwnerRunsOnUncancelled(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            String after = opened.call(() -> {
                assertSame(
                        boom,
                        assertThrows(
                                IllegalStateException.class,
                                () -> Scope.call(scope -> {
                                    scope.fork(() -> fail(boom));
                                    Io.sleep(HOUR);
                                    return null;
                                })));
                Io.checkpoint();
                Io.sleep(Duration.ofMillis(1));
                Io.yield();
                return Io.async(() -> "still running").await();
            });
            assertEquals("still running", after);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void closeWithoutJoinRethrowsTheFailureInsteadOfDroppingIt(Ios.Kind kind) {
        IllegalArgumentException boom = new IllegalArgumentException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(RuntimeException.class, () -> {
                try (Scope scope = Scope.open()) {
                    CompletableFuture<Void> started = new CompletableFuture<>();
                    scope.fork(() -> {
                        if (kind.inline()) {
                            return fail(boom); // run inside fork: failed before close
                        }
                        started.complete(null);
                        try {
                            Io.sleep(HOUR);
                            return null;
                        } catch (Cancelled c) {
                            throw boom; // fails while close unwinds it
                        }
                    });
                    if (!kind.inline()) {
                        Future.from(started).await();
                    }
                    // no suspend point after the failure: close is where it comes out
                }
            }));
            assertSame(boom, out);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent") // inline, the siblings would run to their end inside fork
    void joinRethrowsTheFirstFailureWithEveryOtherFailureSuppressed(Ios.Kind kind) {
        IllegalStateException first = new IllegalStateException("first");
        IllegalArgumentException second = new IllegalArgumentException("failed while unwinding");
        IOException third = new IOException("also failed while unwinding");
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(RuntimeException.class, () -> {
                try (Scope scope = Scope.open()) {
                    scope.fork(() -> {
                        try {
                            Io.sleep(HOUR);
                            return null;
                        } catch (Cancelled c) {
                            throw second;
                        }
                    });
                    scope.fork(() -> {
                        try {
                            Io.sleep(HOUR);
                            return null;
                        } catch (Cancelled c) {
                            throw third;
                        }
                    });
                    scope.fork(() -> {
                        Io.sleep(Duration.ofMillis(5));
                        return fail(first);
                    });
                    scope.join();
                }
            }));
            assertSame(first, out);
            assertEquals(Set.of(second, third), Set.of(first.getSuppressed()));
            assertEquals(2, first.getSuppressed().length);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent") // inline, the child would run to its end inside fork
    void aCancelledOwnerJoinsItsChildrenAndRethrowsCancelledWithTheirFailuresSuppressed(Ios.Kind kind) {
        IllegalStateException unwinding = new IllegalStateException("failed while unwinding");
        AtomicReference<Throwable> fromScope = new AtomicReference<>();
        AtomicInteger childFinally = new AtomicInteger();
        try (Ios.Opened opened = Ios.open(kind)) {
            Future.State ownerState = opened.call(() -> {
                Future<Object> owner = Io.async(() -> {
                    try {
                        return Scope.call(scope -> {
                            CompletableFuture<Void> started = new CompletableFuture<>();
                            scope.fork(() -> {
                                started.complete(null);
                                try {
                                    Io.sleep(HOUR);
                                    return null;
                                } catch (Cancelled c) {
                                    throw unwinding;
                                } finally {
                                    childFinally.incrementAndGet();
                                }
                            });
                            Future.from(started).await();
                            Io.currentTask().orElseThrow().cancel(); // the owner's own cancellation
                            scope.join();
                            return null;
                        });
                    } catch (Throwable t) {
                        fromScope.set(t);
                        throw t;
                    }
                });
                assertThrows(Cancelled.class, owner::await);
                return owner.state();
            });
            assertEquals(Future.State.CANCELLED, ownerState);
            Cancelled out = assertInstanceOf(Cancelled.class, fromScope.get());
            assertArrayEquals(new Throwable[] {unwinding}, out.getSuppressed());
            assertEquals(1, childFinally.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aShieldOpenedInsideTheScopeDefersItsCancellationOfTheOwner(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        List<String> trace = new CopyOnWriteArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(
                    RuntimeException.class,
                    () -> Scope.call(scope -> {
                        scope.fork(() -> fail(boom));
                        Io.shield(() -> {
                            Io.sleep(Duration.ofMillis(20)); // not cut short by the scope
                            trace.add("shielded sleep done");
                        });
                        Io.sleep(HOUR);
                        trace.add("never");
                        return null;
                    })));
            assertSame(boom, out);
            assertEquals(List.of("shielded sleep done"), trace);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anInnerScopesFailureEndsWithItAndDoesNotStopTheOuterOwner(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("inner");
        try (Ios.Opened opened = Ios.open(kind)) {
            String out = opened.call(() -> Scope.call(outer -> {
                Future<String> sibling = outer.fork(() -> {
                    Io.sleep(Duration.ofMillis(30));
                    return "outer child";
                });
                try {
                    Scope.call(inner -> {
                        inner.fork(() -> fail(boom));
                        Io.sleep(HOUR);
                        return null;
                    });
                } catch (IllegalStateException expected) {
                    assertSame(boom, expected);
                }
                Io.sleep(Duration.ofMillis(1)); // the outer scope did not stop: this sleep is not cut
                outer.join();
                return sibling.resultNow();
            }));
            assertEquals("outer child", out);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anOuterScopesFailureUnwindsAnInnerScopeAndComesOutOfTheOuterOne(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("outer");
        AtomicReference<Throwable> fromInner = new AtomicReference<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(
                    RuntimeException.class,
                    () -> Scope.call(outer -> {
                        outer.fork(() -> {
                            Io.sleep(Duration.ofMillis(10));
                            return fail(boom);
                        });
                        try {
                            return Scope.call(inner -> {
                                inner.fork(() -> {
                                    Io.sleep(Duration.ofMillis(5));
                                    return null;
                                });
                                Io.sleep(HOUR);
                                return null;
                            });
                        } catch (Throwable t) {
                            fromInner.set(t);
                            throw t;
                        }
                    })));
            assertSame(boom, out);
            Cancelled inner = assertInstanceOf(
                    Cancelled.class, fromInner.get(), "the inner scope passes the outer cancellation on");
            assertSame(boom, inner.getCause());
        }
    }

    /**
     * The lost-wake-up guard of the scope's cancellation of its owner: a child that fails at once,
     * racing the owner on its way into a long sleep, on 4 workers, many times. A missed wake-up
     * leaves the owner asleep for an hour (the test times out).
     */
    @Test
    void theOwnerNeverMissesAFailureThatRacesItsPark() {
        try (FiberIo io = FiberIo.builder().workers(4).build()) {
            for (int i = 0; i < 500; i++) {
                IllegalStateException boom = new IllegalStateException("boom " + i);
                Object out = Io.with(io).call(() -> {
                    try {
                        return Scope.call(scope -> {
                            scope.fork(() -> fail(boom));
                            Io.sleep(HOUR);
                            return "slept";
                        });
                    } catch (IllegalStateException e) {
                        return e;
                    }
                });
                assertSame(boom, out);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void closeWrapsAFailureTheOwnerAlreadyGotByAwaitingTheChild(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalArgumentException later = new IllegalArgumentException("another");
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(RuntimeException.class, () -> {
                try (Scope scope = Scope.open()) {
                    CompletableFuture<Void> started = new CompletableFuture<>();
                    if (!kind.inline()) { // inline, it would sleep its hour inside fork
                        scope.fork(() -> {
                            started.complete(null);
                            try {
                                Io.sleep(HOUR);
                                return null;
                            } catch (Cancelled c) {
                                throw later;
                            }
                        });
                        Future.from(started).await();
                    }
                    Future<Object> failing = scope.fork(() -> fail(boom));
                    failing.await(); // rethrows boom, which then unwinds the block into close
                }
            }));
            assertSame(boom, out, "not an IllegalArgumentException of self-suppression");
            assertEquals(1, boom.getSuppressed().length);
            Throwable wrapper = boom.getSuppressed()[0];
            assertInstanceOf(CompletionException.class, wrapper);
            assertSame(boom, wrapper.getCause());
            assertArrayEquals(kind.inline() ? new Throwable[0] : new Throwable[] {later}, wrapper.getSuppressed());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void closeWrapsAFailureTheOwnerRethrewFromTheCancelledItGot(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(RuntimeException.class, () -> {
                try (Scope scope = Scope.open()) {
                    scope.fork(() -> fail(boom));
                    sleepAndUnwrapWhatStopsIt(); // the owner itself
                }
            }));
            assertSame(boom, out);
            assertCarriesOneWrapperOfItself(boom);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFailureIsNotLostWhenTheOwnerSwallowsTheCancelledItCaused(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicReference<Cancelled> swallowed = new AtomicReference<>();
            CompletionException out = opened.call(() -> assertThrows(CompletionException.class, () -> {
                try (Scope scope = Scope.open()) {
                    scope.fork(() -> fail(boom));
                    try {
                        Io.sleep(HOUR);
                    } catch (Cancelled c) {
                        swallowed.set(c); // and carries on as if nothing happened
                    }
                }
            }));
            assertSame(boom, swallowed.get().getCause());
            assertSame(boom, out.getCause());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFailureAwaitedBySomeoneElseStillComesOutOfClose(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicReference<Object> watcherGot = new AtomicReference<>();
            CompletionException out = opened.call(() -> assertThrows(CompletionException.class, () -> {
                try (Scope scope = Scope.open()) {
                    Future<Object> failing = scope.fork(() -> fail(boom));
                    Future<Object> watcher = Io.async(
                            () -> { // not the owner, not in the scope
                                try {
                                    return failing.await();
                                } catch (IllegalStateException e) {
                                    return e;
                                }
                            });
                    // shielded: the owner's own suspend point never tells it of the failure
                    watcherGot.set(Io.shield(() -> watcher.await()));
                }
            }));
            assertSame(boom, watcherGot.get());
            assertSame(boom, out.getCause());
        }
    }

    @Test
    void aFailureAnInlineChildSwallowedStillComesOutOfClose() {
        // under BlockingIo the async runs inside the owner's scope and gets its Cancelled; it
        // swallows it: close must not stay silent (nor throw boom itself, which the child could
        // have passed down: see the next test)
        IllegalStateException boom = new IllegalStateException("boom");
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        AtomicReference<Cancelled> childGot = new AtomicReference<>();
        CompletionException out = Io.with(io)
                .call(() -> Io.async(() -> assertThrows(CompletionException.class, () -> {
                            try (Scope scope = Scope.open()) {
                                scope.fork(() -> fail(boom));
                                Io.async(() -> {
                                            try {
                                                Io.sleep(HOUR);
                                            } catch (Cancelled swallowed) {
                                                childGot.set(swallowed); // an inline child's business
                                            }
                                            return null;
                                        })
                                        .await();
                            }
                        }))
                        .await());
        assertSame(boom, childGot.get().getCause(), "the inline child was stopped by the owner's scope");
        assertSame(boom, out.getCause());
        assertEquals(0, io.nowMs(), "nobody slept");
    }

    @Test
    void anInlineChildThatUnwrapsTheCancelledDoesNotBreakClose() {
        IllegalStateException boom = new IllegalStateException("boom");
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        RuntimeException out = Io.with(io)
                .call(() -> Io.async(() -> assertThrows(RuntimeException.class, () -> {
                            try (Scope scope = Scope.open()) {
                                scope.fork(() -> fail(boom));
                                Io.async(ScopeOwnerTest::sleepAndUnwrapWhatStopsIt)
                                        .await(); // boom, which the await rethrows
                            }
                        }))
                        .await());
        assertSame(boom, out, "not an IllegalArgumentException of self-suppression");
        assertCarriesOneWrapperOfItself(boom);
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFailureHandedOutByFailuresCanBeThrownFromTheBlock(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(RuntimeException.class, () -> {
                try (Scope scope = Scope.open()) {
                    scope.fork(() -> fail(boom));
                    List<Throwable> failures = Io.shield(
                            () -> { // not told at a suspend point
                                while (scope.failures().isEmpty()) {
                                    Io.sleep(Duration.ofMillis(1));
                                }
                                return scope.failures();
                            });
                    throw (RuntimeException) failures.getFirst();
                }
            }));
            assertSame(boom, out, "not an IllegalArgumentException of self-suppression");
            assertCarriesOneWrapperOfItself(boom);
        }
    }

    @Test
    void aFailureWakesAnInlineChildParkedAboveTheOwner() {
        // a FiberIo task owns the scope; an inline child (BlockingIo, on the owner's thread) parks
        // on its own token: the failure of a child on another worker must wake it
        IllegalStateException boom = new IllegalStateException("boom");
        BlockingIo inline = BlockingIo.create();
        CompletableFuture<String> never = new CompletableFuture<>();
        try (FiberIo fibers = FiberIo.builder().workers(2).build()) {
            CompletableFuture<Void> parked = new CompletableFuture<>();
            Future<Object> owner = Io.with(fibers)
                    .call(() -> Io.async(() -> Scope.call(scope -> {
                        scope.fork(() -> {
                            Future.from(parked).await(); // fail once the inline child is on its way to park
                            return fail(boom);
                        });
                        return Io.with(inline)
                                .call(() -> Io.async(() -> {
                                            parked.complete(null);
                                            return Future.from(never).await();
                                        })
                                        .await());
                    })));
            assertSame(boom, assertThrows(IllegalStateException.class, owner::await));
        }
    }

    @Test
    void aHelpersCancelDoesNotReachAnInlineChildOfTheTaskItRunsInPlace() {
        // A runs B in place (one worker: B cannot have started elsewhere); B runs C inline under
        // BlockingIo. A's cancel is B's (B is part of A), but B's own cancel never reaches C
        BlockingIo inline = BlockingIo.create();
        AtomicReference<Object> cOutcome = new AtomicReference<>();
        CompletableFuture<Void> cRunning = new CompletableFuture<>();
        try (FiberIo fibers = FiberIo.builder().workers(1).build()) {
            Future<Object> a = Io.with(fibers)
                    .call(() -> Io.async(() -> {
                        Future<Object> b = Io.async(() -> Io.with(inline)
                                .call(() -> Io.async(() -> {
                                            cRunning.complete(null);
                                            try {
                                                // parked (or about to) when A is cancelled: the cancel wakes this
                                                // thread,
                                                // C looks again and must find nothing that stops it
                                                Io.sleep(Duration.ofMillis(100));
                                                cOutcome.set("slept");
                                            } catch (Cancelled c) {
                                                cOutcome.set(c);
                                            }
                                            return null;
                                        })
                                        .await()));
                        return b.await();
                    }));
            cRunning.join();
            a.cancel();
            assertThrows(Cancelled.class, a::await);
        }
        assertEquals("slept", cOutcome.get());
    }

    @Test
    void aDeadlineStopsATaskTheOwnerRunsInPlace() {
        // one worker, busy with the owner: the async cannot start elsewhere, so the owner's await
        // runs it in place, inside the scope, and the deadline cancels it
        try (FiberIo fibers = FiberIo.builder().workers(1).virtualClock().build()) {
            AtomicReference<Future<String>> inner = new AtomicReference<>();
            long took = fibers.call(() -> {
                long before = Io.current().nowMs();
                assertThrows(
                        TimedOut.class,
                        () -> Scope.call(Duration.ofMillis(40), scope -> {
                            inner.set(Io.async(() -> {
                                Io.sleep(HOUR);
                                return "slept";
                            }));
                            return inner.get().await();
                        }));
                return Io.current().nowMs() - before;
            });
            assertEquals(40, took);
            assertEquals(Future.State.CANCELLED, inner.get().state());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent") // both scopes must fail while the other is running
    void whenAnOuterScopeStopsAnInnerOneBothFailuresComeOut(Ios.Kind kind) {
        IllegalStateException outerFailure = new IllegalStateException("outer");
        IllegalArgumentException innerFailure = new IllegalArgumentException("inner, while unwinding");
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException out = opened.call(() -> assertThrows(
                    RuntimeException.class,
                    () -> Scope.call(outer -> {
                        outer.fork(() -> {
                            Io.sleep(Duration.ofMillis(10));
                            return fail(outerFailure);
                        });
                        return Scope.call(inner -> {
                            inner.fork(() -> {
                                try {
                                    Io.sleep(HOUR);
                                    return null;
                                } catch (Cancelled c) {
                                    throw innerFailure;
                                }
                            });
                            inner.join();
                            return null;
                        });
                    })));
            assertSame(outerFailure, out);
            assertArrayEquals(new Throwable[] {innerFailure}, outerFailure.getSuppressed());
        }
    }

    // ------------------------------------------------------------ deadline

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aDeadlineCancelsTheWholeBlockAndTimedOutComesOut(Ios.Kind kind) {
        List<Future<Object>> children = new CopyOnWriteArrayList<>();
        AtomicInteger started = new AtomicInteger();
        AtomicInteger finallies = new AtomicInteger();
        try (Ios.Opened opened = Ios.open(kind)) {
            long took = opened.call(() -> {
                long before = Io.current().nowMs();
                TimedOut out = assertThrows(
                        TimedOut.class,
                        () -> Scope.call(Duration.ofMillis(50), scope -> {
                            for (int i = 0; i < 2; i++) {
                                children.add(scope.fork(() -> {
                                    started.incrementAndGet();
                                    try {
                                        Io.sleep(HOUR);
                                        return null;
                                    } finally {
                                        finallies.incrementAndGet();
                                    }
                                }));
                            }
                            Io.sleep(HOUR);
                            return "never";
                        }));
                assertNull(out.getCause());
                Io.sleep(Duration.ofMillis(1)); // the caller is not cancelled after the scope
                return Io.current().nowMs() - before;
            });
            assertTrue(took >= 50 && took < MUCH_LESS_THAN_AN_HOUR_MS, "took " + took + " ms");
            assertEquals(2, children.size());
            children.forEach(child -> assertEquals(Future.State.CANCELLED, child.state()));
            // inline, the first child runs inside fork until the deadline; the second is then not started
            assertEquals(kind.inline() ? 1 : 2, started.get());
            assertEquals(started.get(), finallies.get());
        }
    }

    /**
     * A timeout is rounded up to a whole millisecond, as every other timeout is: half a
     * millisecond used to be rounded down to none, so the scope's deadline had passed as it
     * opened and a block that returns at once timed out. On the virtual-clock Ios: on a real one
     * the block itself may take the millisecond.
     */
    @ParameterizedTest
    @MethodSource("virtualClocks")
    void aTimeoutUnderAMillisecondIsNotNone(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            String out = opened.call(() -> Scope.call(Duration.ofNanos(500_000), scope -> "in time"));
            assertEquals("in time", out);
        }
    }

    static Stream<Named<Ios.Kind>> virtualClocks() {
        return Ios.all().filter(named -> named.getPayload().virtualClock());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aDeadlineReachesAnOwnerWaitingInJoin(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Object out = opened.call(() -> {
                try {
                    return Scope.call(Duration.ofMillis(30), scope -> {
                        Future<Object> slow = scope.fork(() -> {
                            Io.sleep(HOUR);
                            return null;
                        });
                        scope.join();
                        return slow.resultNow();
                    });
                } catch (TimedOut expected) {
                    return expected;
                }
            });
            assertInstanceOf(TimedOut.class, out);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aDeadlineThatDoesNotPassChangesNothing(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            int sum = opened.call(() -> {
                int value = Scope.call(HOUR, scope -> {
                    Future<Integer> a = scope.fork(() -> {
                        Io.sleep(Duration.ofMillis(2));
                        return 20;
                    });
                    Future<Integer> b = scope.fork(() -> 22);
                    scope.join();
                    return a.resultNow() + b.resultNow();
                });
                Io.sleep(Duration.ofMillis(1));
                return value;
            });
            assertEquals(42, sum);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aZeroDeadlineHasPassedAlreadyAndForksDoNotRun(Ios.Kind kind) {
        AtomicInteger ran = new AtomicInteger();
        AtomicReference<Future<Integer>> child = new AtomicReference<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> assertThrows(
                    TimedOut.class,
                    () -> Scope.call(Duration.ZERO, scope -> {
                        child.set(scope.fork(ran::incrementAndGet));
                        scope.join();
                        return null;
                    })));
            assertEquals(0, ran.get());
            assertEquals(Future.State.CANCELLED, child.get().state());
        }
    }

    // ------------------------------------------------------------ plain-thread owner

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aDeadlineStopsCodeRunningAboveTheOwnerOnItsStack(Ios.Kind kind) {
        // BlockingIo runs the async inside the await's caller, FiberIo may run it in place (join
        // helping): either way it runs inside the owner's scope and the deadline stops it
        try (Ios.Opened opened = Ios.open(kind)) {
            long took = opened.call(() -> {
                long before = Io.current().nowMs();
                assertA40msDeadlineStopsAnAwaitedHourLongSleep();
                return Io.current().nowMs() - before;
            });
            assertTrue(took >= 40 && took < MUCH_LESS_THAN_AN_HOUR_MS, "took " + took + " ms");
        }
    }

    /** A 40 ms scope around the await of a task that sleeps an hour ends in TimedOut. */
    private static void assertA40msDeadlineStopsAnAwaitedHourLongSleep() {
        assertThrows(
                TimedOut.class,
                () -> Scope.call(
                        Duration.ofMillis(40),
                        scope -> Io.async(() -> {
                                    Io.sleep(HOUR);
                                    return "slept";
                                })
                                .await()));
    }

    @Test
    void aPlainThreadOwnerOnBlockingIoIsStoppedAndThenRunsOnUncancelled() {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        IllegalStateException boom = new IllegalStateException("boom");
        long slept = Io.with(io).call(() -> {
            assertTrue(Io.currentTask().isEmpty(), "a plain-thread owner: no task");
            long before = io.nowMs();
            assertSame(
                    boom,
                    assertThrows(
                            IllegalStateException.class,
                            () -> Scope.call(scope -> {
                                scope.fork(() -> fail(boom));
                                Io.sleep(HOUR);
                                return null;
                            })));
            long stopped = io.nowMs() - before;
            Io.checkpoint();
            Io.sleep(Duration.ofMillis(7)); // uncancelled: a full sleep
            assertEquals(stopped + 7, io.nowMs() - before);
            return stopped;
        });
        assertEquals(0, slept);
        assertFalse(Thread.currentThread().isInterrupted());
    }

    @Test
    void aPlainThreadOwnersDeadlineStopsAnInlineChildRunningAboveIt() {
        // main with BlockingIo: the async runs inline on main, inside main's (plain) scopes
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        long at = Io.with(io).call(() -> {
            assertTrue(Io.currentTask().isEmpty(), "a plain-thread owner: no task");
            assertA40msDeadlineStopsAnAwaitedHourLongSleep();
            Io.sleep(Duration.ofMillis(3)); // and main runs on uncancelled
            return io.nowMs();
        });
        assertEquals(43, at);
    }

    @Test
    void aPlainThreadOwnersDeadlineOnARealClockStopsAnInlineChild() {
        BlockingIo io = BlockingIo.create();
        long before = System.nanoTime();
        Object out = Io.with(io).call(() -> {
            try {
                return Scope.call(
                        Duration.ofMillis(30),
                        scope -> Io.async(() -> {
                                    Io.sleep(HOUR);
                                    return "slept an hour";
                                })
                                .await());
            } catch (TimedOut expected) {
                return expected;
            }
        });
        assertInstanceOf(TimedOut.class, out);
        assertTrue(System.nanoTime() - before < Duration.ofMinutes(1).toNanos());
    }

    @Test
    void aShieldInsideAPlainOwnersScopeShieldsItsInlineChildren() {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        long at = Io.with(io).call(() -> {
            assertThrows(
                    TimedOut.class,
                    () -> Scope.call(
                            Duration.ofMillis(10),
                            scope -> Io.shield(() -> Io.async(() -> {
                                        Io.sleep(Duration.ofMillis(25)); // shielded: sleeps through the deadline
                                        return "slept";
                                    })
                                    .await())));
            return io.nowMs();
        });
        assertEquals(25, at);
    }

    /** An inbox fed by a producer that sleeps ten hours first: a side thread of the world, asleep. */
    private static Inbox<Integer> aSideThreadAsleep() {
        return Reactive.subscribe(
                Reactive.produce(emitter -> {
                    Io.sleep(Duration.ofHours(10));
                    emitter.emit(1);
                }),
                1);
    }

    @Test
    void anInlineChildOfAPlainOwnerInAWorldWithASideThreadWakesAtTheDeadline() {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        long at = Io.with(io).call(() -> {
            Inbox<Integer> inbox = aSideThreadAsleep();
            try {
                assertThrows(
                        TimedOut.class,
                        () -> Scope.call(
                                Duration.ofMillis(50),
                                scope -> Io.async(inbox::receive).await()));
                return io.nowMs();
            } finally {
                inbox.cancel();
            }
        });
        assertEquals(50, at, "the world woke the inline child at the owner's deadline");
    }

    @Test
    void aPlainThreadOwnersDeadlineOnARealClockStopsItsSleep() {
        BlockingIo io = BlockingIo.create();
        Object out = Io.with(io).call(() -> {
            try {
                return Scope.call(Duration.ofMillis(30), scope -> {
                    Io.sleep(HOUR);
                    return "slept an hour";
                });
            } catch (TimedOut expected) {
                return expected;
            }
        });
        assertInstanceOf(TimedOut.class, out);
    }

    @Test
    void aPlainThreadWithNothingInstalledTimesOutWhileAwaitingAnotherIosTask() {
        try (FiberIo fibers = FiberIo.builder().workers(2).build()) {
            Future<String> slow = Io.with(fibers)
                    .call(() -> Io.async(() -> {
                        Io.sleep(HOUR);
                        return "slept";
                    }));
            long before = System.nanoTime();
            // no Io installed here: the deadline is on the default Io's clock, whose timers fire
            // only in a wait through it
            assertThrows(TimedOut.class, () -> Scope.call(Duration.ofMillis(30), scope -> slow.await()));
            assertTrue(System.nanoTime() - before < Duration.ofMinutes(1).toNanos());
            slow.cancel();
        }
    }

    @Test
    void aPlainOwnerInAVirtualClockWorldWithASideThreadWakesAtItsDeadline() {
        BlockingIo io = BlockingIo.builder().virtualClock().build();
        long at = Io.with(io).call(() -> {
            Inbox<Integer> inbox = aSideThreadAsleep();
            try {
                assertThrows(TimedOut.class, () -> Scope.call(Duration.ofMillis(50), scope -> inbox.receive()));
                return io.nowMs();
            } finally {
                inbox.cancel();
            }
        });
        assertEquals(50, at, "the world woke the owner at its deadline, not when the producer woke");
    }

    // ------------------------------------------------------------ supervisor

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aSupervisorReportsEachFailureNobodyObservedToItsHandler(Ios.Kind kind) {
        IllegalStateException unseen = new IllegalStateException("nobody awaited me");
        IllegalStateException awaited = new IllegalStateException("awaited");
        List<Throwable> handled = new CopyOnWriteArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                try (Scope scope = Scope.supervisor((thread, e) -> handled.add(e))) {
                    scope.fork(() -> fail(unseen));
                    Future<Object> seen = scope.fork(() -> fail(awaited));
                    Future<String> fine = scope.fork(() -> "fine");
                    scope.join();
                    assertSame(awaited, assertThrows(IllegalStateException.class, seen::await));
                    assertEquals("fine", fine.await());
                    assertEquals(List.of(), handled, "nothing is reported before close");
                }
                return null;
            });
            assertEquals(List.of(unseen), handled);
        }
    }

    /**
     * A handler that threw an Error (an assertion in a test's handler) used to escape close: the
     * failures after it went unreported, and the Error replaced the block's own outcome.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aSupervisorsHandlerThatThrowsAnErrorStopsNeitherTheReportsNorTheBlock(Ios.Kind kind) {
        IllegalStateException first = new IllegalStateException("first");
        IllegalStateException second = new IllegalStateException("second");
        List<Throwable> handled = new CopyOnWriteArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            String value = opened.call(() -> {
                try (Scope scope = Scope.supervisor((thread, e) -> {
                    handled.add(e);
                    throw new AssertionError("the handler's own failure");
                })) {
                    scope.fork(() -> fail(first));
                    scope.fork(() -> fail(second));
                    scope.join();
                }
                return "the block's value";
            });
            assertEquals("the block's value", value);
            assertEquals(Set.of(first, second), Set.copyOf(handled));
            assertEquals(2, handled.size());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aSupervisorWhoseFailuresWereReadReportsNothing(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("read through failures()");
        List<Throwable> handled = new CopyOnWriteArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                try (Scope scope = Scope.supervisor((thread, e) -> handled.add(e))) {
                    scope.fork(() -> fail(boom));
                    scope.join();
                    assertEquals(List.of(boom), scope.failures());
                }
                return null;
            });
            assertEquals(List.of(), handled);
        }
    }

    @Test
    void aSupervisorWithoutAHandlerReportsToTheIosOwn() {
        List<Throwable> handled = new CopyOnWriteArrayList<>();
        IOException boom = new IOException("checked, unobserved");
        for (Io io : List.of(
                BlockingIo.builder()
                        .uncaughtExceptionHandler((t, e) -> handled.add(e))
                        .build(),
                FiberIo.builder()
                        .workers(2)
                        .uncaughtExceptionHandler((t, e) -> handled.add(e))
                        .build())) {
            Io.with(io).call(() -> {
                try (Scope scope = Scope.supervisor()) {
                    scope.fork(() -> {
                        throw boom;
                    });
                    scope.join(); // a supervisor's join returns normally; nobody looks at the failure
                }
                return null;
            });
            if (io instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        }
        assertEquals(List.of(boom, boom), handled);
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aCheckedFirstFailureComesOutWrappedWithTheSameCause(Ios.Kind kind) {
        IOException boom = new IOException("checked");
        try (Ios.Opened opened = Ios.open(kind)) {
            CompletionException out = opened.call(() -> assertThrows(
                    CompletionException.class,
                    () -> Scope.call(scope -> {
                        scope.fork(() -> {
                            throw boom;
                        });
                        Io.sleep(HOUR);
                        return null;
                    })));
            assertSame(boom, out.getCause());
        }
    }
}
