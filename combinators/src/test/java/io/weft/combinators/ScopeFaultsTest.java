package io.weft.combinators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.blocking.BlockingIo;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Scope's bookkeeping around the moments where it can go wrong, driven through Scope's test
 * hooks: a fork that runs out of memory after its child was spawned, and a deadline that passes
 * between the block form's clean join and its close. Each hook clears itself when it runs, so a
 * test that hangs does not leave it set for the next.
 */
class ScopeFaultsTest {
    private static final Duration HOUR = Duration.ofHours(1);

    @AfterEach
    void clearHooks() {
        Scope.beforeChildRecorded = null;
        Scope.afterChildWatched = null;
        Scope.afterBlockJoined = null;
        Scope.beforeFailureRecorded = null;
    }

    /**
     * fork's bookkeeping after the spawn threw (no memory for the children set's entry): the
     * child had been counted but was never recorded or watched, so nothing ever counted it done
     * and the scope's join and close waited for good, with the child left running. Now the
     * failed fork cancels the child, waits for it, and counts it done itself.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aForkThatRunsOutOfMemoryRecordingItsChildEndsTheChildAndTheScopeStillJoins(Ios.Kind kind) {
        OutOfMemoryError noMemory = new OutOfMemoryError("no memory for the children set (test)");
        assertAForkThatThrowsAfterItsSpawnLeavesNothingBehind(
                kind,
                noMemory,
                () -> Scope.beforeChildRecorded = () -> {
                    Scope.beforeChildRecorded = null;
                    throw noMemory;
                });
    }

    /**
     * The same after the child's onDone action was registered (its call may allocate after the
     * registration): the action and the failed fork must not both count the child done, which
     * would let close return while a sibling still runs.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aForkThatThrowsAfterWatchingItsChildCountsTheChildDoneExactlyOnce(Ios.Kind kind) {
        OutOfMemoryError noMemory = new OutOfMemoryError("no memory after onDone (test)");
        assertAForkThatThrowsAfterItsSpawnLeavesNothingBehind(
                kind,
                noMemory,
                () -> Scope.afterChildWatched = () -> {
                    Scope.afterChildWatched = null;
                    throw noMemory;
                });
    }

    /**
     * A scope forks a healthy child, then {@code installFault} makes the next fork's bookkeeping
     * throw {@code noMemory} after its spawn: that fork throws it, its child does not outlive it,
     * join returns with nothing pending, and the healthy child's value comes out.
     */
    private static void assertAForkThatThrowsAfterItsSpawnLeavesNothingBehind(
            Ios.Kind kind, OutOfMemoryError noMemory, Runnable installFault) {
        AtomicInteger running = new AtomicInteger();
        try (Ios.Opened opened = Ios.open(kind)) {
            String out = opened.call(() -> Scope.call(scope -> {
                Future<String> healthy = scope.fork(() -> "healthy");
                installFault.run();
                OutOfMemoryError thrown =
                        assertThrows(OutOfMemoryError.class, () -> scope.fork(longChild(kind, running)));
                assertSame(noMemory, thrown);
                assertEquals(0, running.get(), "the child outlived the fork that failed");
                scope.join();
                assertTrue(scope.toString().contains("pending=0"), scope.toString());
                return healthy.await();
            }));
            assertEquals("healthy", out);
        }
    }

    /**
     * A child's onDone action that threw while it recorded the child's failure (no memory for
     * the list's entry) left the child uncounted, and join waited for good. It is counted done
     * whatever happens after the action took it out, and a fail-fast scope still stops its
     * owner with the failure (decided before anything allocates), so join throws it; the error
     * goes where the completing thread reports an action's failure.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aChildWhoseFailureCannotBeRecordedIsStillCountedDoneAndStillFailsTheScope(Ios.Kind kind) {
        OutOfMemoryError noMemory = new OutOfMemoryError("no memory for the failures list (test)");
        IllegalStateException own = new IllegalStateException("the child's own failure");
        try (Ios.Opened opened = Ios.open(kind)) {
            Throwable out = opened.call(() -> {
                try {
                    return Scope.call(scope -> {
                        Scope.beforeFailureRecorded = () -> {
                            Scope.beforeFailureRecorded = null;
                            throw noMemory;
                        };
                        scope.fork(() -> {
                            throw own;
                        });
                        scope.join();
                        return null;
                    });
                } catch (RuntimeException e) {
                    return e;
                }
            });
            assertSame(own, out);
        }
    }

    /**
     * A CompletableFuture view of a child that the owner completed first (complete,
     * completeOnTimeout, orTimeout) cannot carry the child's later failure; the view used to
     * mark that failure observed all the same, and a supervisor then reported it to nobody.
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void aFailureAViewCompletedFirstCouldNotCarryIsStillReported(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom (test)");
        java.util.List<Throwable> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                try (Scope scope = Scope.supervisor((thread, e) -> reported.add(e))) {
                    Future<Integer> child = scope.fork(() -> {
                        Io.sleep(Duration.ofMillis(10));
                        throw boom;
                    });
                    child.toCompletableFuture().complete(0); // the view is done before the child fails
                    scope.join(); // a supervisor's join returns normally; close reports what nobody saw
                }
                return null;
            });
            assertEquals(java.util.List.of(boom), reported);
        }
    }

    /** A child that runs an hour where tasks run concurrently, and ends at once where they run inline. */
    private static java.util.concurrent.Callable<String> longChild(Ios.Kind kind, AtomicInteger running) {
        return () -> {
            running.incrementAndGet();
            try {
                Io.sleep(kind.inline() ? Duration.ZERO : HOUR);
                return "late";
            } finally {
                running.decrementAndGet();
            }
        };
    }

    /**
     * The block and every child finished in time, and the block form's join said so; the
     * deadline then passed before close looked at it, and close threw TimedOut for work that was
     * done. Now the deadline ends with the clean join. The hook makes the clock pass the deadline
     * in that window (a shielded sleep on a virtual clock).
     */
    @ParameterizedTest
    @MethodSource("virtualClocks")
    void aDeadlinePassingAfterTheBlocksCleanJoinIsNotATimeout(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            String out = opened.call(() -> Scope.call(Duration.ofMillis(10), scope -> {
                Future<String> child = scope.fork(() -> "in time");
                Scope.afterBlockJoined = () -> {
                    Scope.afterBlockJoined = null;
                    Io.shield(() -> Io.sleep(Duration.ofMillis(50)));
                };
                return child.await();
            }));
            assertEquals("in time", out);
        }
    }

    /**
     * A task launched inside a scope on an inline Io runs inside it, so the scope's deadline
     * stops it too: that is its own cancellation, not a failure for the handler (the launch's
     * check once looked only at a cancel of the task itself).
     */
    @org.junit.jupiter.api.Test
    void aLaunchStoppedByTheScopeItRunsInsideReportsNothing() {
        java.util.List<Throwable> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
        Io inline = BlockingIo.builder()
                .virtualClock()
                .uncaughtExceptionHandler((thread, e) -> reported.add(e))
                .build();
        Throwable out = Io.with(inline).call(() -> {
            try {
                return Scope.call(Duration.ofMillis(10), scope -> {
                    Io.launch(() -> Io.sleep(HOUR)); // inline: the deadline stops it in its sleep
                    return null;
                });
            } catch (TimedOut expected) {
                return expected;
            }
        });
        assertTrue(out instanceof TimedOut, String.valueOf(out));
        assertEquals(java.util.List.of(), reported);
    }

    static Stream<Named<Ios.Kind>> virtualClocks() {
        return Ios.all().filter(named -> named.getPayload().virtualClock());
    }
}
