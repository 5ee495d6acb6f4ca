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
import io.weft.testing.Parked;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ScopeTest {
    private static final Duration FOREVER = Duration.ofHours(1);

    /** Counts bodies that started and bodies whose finally ran. */
    private static final class Probe {
        final AtomicInteger started = new AtomicInteger();
        final AtomicInteger finished = new AtomicInteger();

        <T> T sleepForever() {
            started.incrementAndGet();
            try {
                Io.sleep(FOREVER);
                return null;
            } finally {
                finished.incrementAndGet();
            }
        }
    }

    /**
     * Completes {@code gate} once the thread in {@code thread} is parked in {@code method} of
     * {@link Scope}, from a helper thread; completes it exceptionally if that never happens.
     */
    private static void completeWhenParkedIn(
            AtomicReference<Thread> thread, String method, CompletableFuture<Void> gate) {
        Thread.ofPlatform().daemon().name("gate-" + method).start(() -> {
            try {
                Awaitility.await()
                        .atMost(Duration.ofSeconds(20))
                        .pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(2))
                        .until(() -> thread.get() != null && Parked.at(thread.get(), Scope.class, method));
                gate.complete(null);
            } catch (Throwable t) {
                gate.completeExceptionally(t);
            }
        });
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void joinWaitsForEveryChildAndTheirValuesAreReady(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            // Scheduled children end only once the owner is parked in join, so join finds every one
            // of them pending; inline ones run to their end inside fork, before join.
            AtomicReference<Thread> owner = new AtomicReference<>();
            CompletableFuture<Void> ownerJoining = new CompletableFuture<>();
            if (kind.inline()) {
                ownerJoining.complete(null);
            } else {
                completeWhenParkedIn(owner, "join", ownerJoining);
            }
            List<Integer> values = opened.call(() -> {
                owner.set(Thread.currentThread());
                try (Scope scope = Scope.open()) {
                    List<Future<Integer>> children = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {
                        int n = i;
                        children.add(scope.fork(() -> {
                            Future.from(ownerJoining).await();
                            return n * n;
                        }));
                    }
                    scope.join();
                    return children.stream().map(Future::resultNow).toList();
                }
            });
            assertEquals(List.of(0, 1, 4, 9, 16), values);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void failFastJoinRethrowsTheFailureAndLaterChildrenAreCancelled(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        Probe probe = new Probe();
        AtomicReference<Future<Object>> sibling = new AtomicReference<>();
        AtomicReference<Scope> scopeRef = new AtomicReference<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException thrown = assertThrows(
                    RuntimeException.class,
                    () -> opened.call(() -> {
                        try (Scope scope = Scope.open()) {
                            scopeRef.set(scope);
                            scope.fork(() -> {
                                throw boom;
                            });
                            sibling.set(scope.fork(probe::sleepForever));
                            scope.join();
                            return null;
                        }
                    }));
            assertSame(boom, thrown);
            // BlockingIo: the sibling is never started; FiberIo: it is cancelled. Either way:
            assertEquals(Future.State.CANCELLED, sibling.get().state());
            assertEquals(probe.started.get(), probe.finished.get());
            assertEquals(List.of(boom), scopeRef.get().failures());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void failFastCancelsASiblingThatIsAlreadyRunning(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        Probe probe = new Probe();
        AtomicReference<Future<Object>> sibling = new AtomicReference<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            RuntimeException thrown = assertThrows(
                    RuntimeException.class,
                    () -> opened.call(() -> {
                        try (Scope scope = Scope.open()) {
                            CompletableFuture<Void> siblingStarted = new CompletableFuture<>();
                            sibling.set(scope.fork(() -> {
                                siblingStarted.complete(null);
                                return probe.sleepForever();
                            }));
                            scope.fork(() -> {
                                Future.from(siblingStarted).await();
                                throw boom;
                            });
                            scope.join();
                            return null;
                        }
                    }));
            assertSame(boom, thrown);
            assertEquals(Future.State.CANCELLED, sibling.get().state());
            assertEquals(1, probe.started.get());
            assertEquals(1, probe.finished.get(), "the cancelled sibling's finally ran before join returned");
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void failFastWrapsACheckedFailure(Ios.Kind kind) {
        IOException io = new IOException("disk");
        try (Ios.Opened opened = Ios.open(kind)) {
            CompletionException thrown = assertThrows(
                    CompletionException.class,
                    () -> opened.call(() -> {
                        try (Scope scope = Scope.open()) {
                            scope.fork(() -> {
                                throw io;
                            });
                            scope.join();
                            return null;
                        }
                    }));
            assertSame(io, thrown.getCause());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void supervisorCollectsFailuresAndSiblingsRunToCompletion(Ios.Kind kind) {
        IllegalStateException first = new IllegalStateException("first");
        IllegalArgumentException second = new IllegalArgumentException("second");
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Object> result = opened.call(() -> {
                try (Scope scope = Scope.supervisor()) {
                    CompletableFuture<Void> bothFailed = new CompletableFuture<>();
                    AtomicInteger failed = new AtomicInteger();
                    Runnable oneFailed = () -> {
                        if (failed.incrementAndGet() == 2) {
                            bothFailed.complete(null);
                        }
                    };
                    scope.fork(() -> {
                                throw first;
                            })
                            .onDone(oneFailed);
                    scope.fork(() -> {
                                throw second;
                            })
                            .onDone(oneFailed);
                    // still running when both siblings have failed (inline: forked after they failed)
                    Future<Integer> survivor = scope.fork(() -> {
                        Future.from(bothFailed).await();
                        return 7;
                    });
                    scope.join();
                    return List.of(survivor.resultNow(), scope.failures());
                }
            });
            assertEquals(7, result.get(0));
            assertEquals(Set.of(first, second), Set.copyOf((List<?>) result.get(1)));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aChildThatEndsCancelledIsNotAFailure(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Object> result = opened.call(() -> {
                try (Scope scope = Scope.open()) {
                    Future<Object> child = scope.fork(() -> {
                        throw new Cancelled("gave up");
                    });
                    Future<Integer> other = scope.fork(() -> 3);
                    scope.join();
                    return List.of(child.state(), other.resultNow(), scope.failures());
                }
            });
            assertEquals(List.of(Future.State.CANCELLED, 3, List.of()), result);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.combinators.Kinds#timed")
    void closeWithoutJoinLeavesNoChildRunningAndEveryFinallyRan(Ios.Kind kind) {
        Probe probe = new Probe();
        List<Future<Object>> children = new ArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                try (Scope scope = Scope.open()) {
                    for (int i = 0; i < 3; i++) {
                        children.add(scope.fork(probe::sleepForever));
                    }
                }
                return null;
            });
            for (Future<Object> child : children) {
                assertTrue(child.isDone(), child + " outlived its scope");
            }
            assertEquals(probe.started.get(), probe.finished.get());
            if (!kind.inline()) {
                assertEquals(
                        3,
                        children.stream()
                                .filter(c -> c.state() == Future.State.CANCELLED)
                                .count());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.combinators.Kinds#timed")
    void ownerCancelledBeforeJoinCancelsChildrenAndJoinThrowsCancelled(Ios.Kind kind) {
        Probe probe = new Probe();
        List<Future<Object>> children = new ArrayList<>();
        AtomicReference<Throwable> fromJoin = new AtomicReference<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            Future.State ownerState = opened.call(() -> {
                Future<Object> owner = Io.async(() -> {
                    try (Scope scope = Scope.open()) {
                        children.add(scope.fork(probe::sleepForever));
                        children.add(scope.fork(probe::sleepForever));
                        Io.currentTask().orElseThrow().cancel();
                        try {
                            scope.join();
                        } catch (Cancelled c) {
                            fromJoin.set(c);
                            throw c;
                        }
                        return null;
                    }
                });
                try {
                    owner.await();
                } catch (Cancelled expected) {
                    // checked through the state below
                }
                return owner.state();
            });
            assertEquals(Future.State.CANCELLED, ownerState);
            assertInstanceOf(Cancelled.class, fromJoin.get());
            children.forEach(child -> assertTrue(child.isDone(), child + " outlived its scope"));
            assertEquals(probe.started.get(), probe.finished.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void ownerCancelledWhileJoiningCancelsTheChildren(Ios.Kind kind) {
        Probe probe = new Probe();
        List<Future<Object>> children = new ArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            Future.State ownerState = opened.call(() -> {
                CompletableFuture<Void> running = new CompletableFuture<>();
                Future<Object> owner = Io.async(() -> {
                    try (Scope scope = Scope.open()) {
                        children.add(scope.fork(probe::sleepForever));
                        children.add(scope.fork(() -> {
                            running.complete(null);
                            return probe.sleepForever();
                        }));
                        scope.join();
                        return null;
                    }
                });
                Future.from(running).await();
                owner.cancel();
                assertThrows(Cancelled.class, owner::await);
                return owner.state();
            });
            assertEquals(Future.State.CANCELLED, ownerState);
            children.forEach(child -> assertEquals(Future.State.CANCELLED, child.state()));
            assertEquals(probe.started.get(), probe.finished.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void forkAndJoinAfterCloseThrowAndCloseIsIdempotent(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Scope scope = Scope.open();
                scope.close();
                scope.close();
                assertThrows(IllegalStateException.class, () -> scope.fork(() -> 1));
                assertThrows(IllegalStateException.class, scope::join);
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void onlyTheOwnerMayForkJoinOrClose(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<String> seen = opened.call(() -> {
                try (Scope scope = Scope.open()) {
                    Future<List<String>> child = scope.fork(() -> List.of(
                            thrownBy(() -> scope.fork(() -> 1)), thrownBy(scope::join), thrownBy(scope::close)));
                    scope.join();
                    return child.resultNow();
                }
            });
            assertEquals(
                    List.of("WrongThreadException", "WrongThreadException", "WrongThreadException"),
                    seen,
                    "what fork, join and close threw in a child");
            Scope plain = Scope.open(); // owned by this plain test thread
            CompletableFuture<Throwable> other = new CompletableFuture<>();
            Thread.ofPlatform().start(() -> {
                try {
                    plain.fork(() -> 1);
                    other.complete(null);
                } catch (Throwable t) {
                    other.complete(t);
                }
            });
            assertInstanceOf(WrongThreadException.class, other.get());
            plain.close();
        }
    }

    /** The simple name of what {@code call} threw, or "nothing" if it returned. */
    private static String thrownBy(Executable call) {
        try {
            call.execute();
            return "nothing";
        } catch (Throwable t) {
            return t.getClass().getSimpleName();
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void nullBodyIsRejectedByName(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            NullPointerException npe = opened.call(() -> {
                try (Scope scope = Scope.open()) {
                    return assertThrows(NullPointerException.class, () -> scope.fork(null));
                }
            });
            assertEquals("body", npe.getMessage());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void closeOnAnInterruptedPlainThreadStillWaitsForEveryChild(Ios.Kind kind) throws InterruptedException {
        try (Ios.Opened opened = Ios.open(kind)) {
            CompletableFuture<Void> release = new CompletableFuture<>();
            AtomicReference<Future<String>> child = new AtomicReference<>();
            AtomicReference<Throwable> ownerFailure = new AtomicReference<>();
            AtomicReference<Thread> closing = new AtomicReference<>(); // the thread running the scope's block
            Thread owner = Thread.ofPlatform()
                    .unstarted(() -> Io.with(opened.io()).run(() -> {
                        closing.set(Thread.currentThread());
                        try (Scope scope = Scope.open()) {
                            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
                            child.set(scope.fork(() -> Io.shield(() -> {
                                started.countDown();
                                return Future.from(release).await() == null ? "done" : "done";
                            })));
                            try {
                                started.await(); // started, so close's cancel finds it running (and shielded)
                            } catch (InterruptedException e) {
                                throw new AssertionError(e);
                            }
                            Thread.currentThread().interrupt(); // e.g. an executor shutting down
                        }
                        // close returned: the child must have finished, and the interrupt is still set
                        if (!child.get().isDone() || !Thread.currentThread().isInterrupted()) {
                            throw new AssertionError("close returned with the child " + child.get()
                                    + (Thread.currentThread().isInterrupted() ? "" : " and the interrupt lost"));
                        }
                    }));
            owner.setUncaughtExceptionHandler((t, e) -> ownerFailure.set(e));
            owner.start();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(2))
                    .until(() -> ownerFailure.get() != null
                            || closing.get() != null && Parked.at(closing.get(), Scope.class, "close"));
            if (ownerFailure.get() != null) {
                throw new AssertionError("the owner failed", ownerFailure.get());
            }
            assertTrue(owner.isAlive(), "close did not wait for the shielded child");
            release.complete(null);
            owner.join(20_000);
            assertTrue(!owner.isAlive(), "close did not return after the child finished");
            if (ownerFailure.get() != null) {
                throw new AssertionError("the owner failed", ownerFailure.get());
            }
            assertEquals(Future.State.CANCELLED, child.get().state(), "close cancelled it; the shield deferred that");
        }
    }
}
