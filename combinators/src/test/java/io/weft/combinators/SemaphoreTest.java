package io.weft.combinators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.testing.Ios;
import io.weft.testing.Parked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class SemaphoreTest {

    @Test
    void tryAcquireAndReleaseCountPermits() {
        Semaphore semaphore = new Semaphore(2);
        assertTrue(semaphore.tryAcquire());
        assertTrue(semaphore.tryAcquire());
        assertFalse(semaphore.tryAcquire());
        assertEquals(0, semaphore.availablePermits());
        semaphore.release();
        assertEquals(1, semaphore.availablePermits());
        assertThrows(IllegalArgumentException.class, () -> new Semaphore(-1));
        assertEquals(
                "body",
                assertThrows(NullPointerException.class, () -> semaphore.withPermit(null))
                        .getMessage());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void acquireSuspendsUntilARelease(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            Semaphore semaphore = new Semaphore(0);
            Elsewhere<String> acquirer = Elsewhere.start(opened.io(), () -> {
                semaphore.acquire();
                return "acquired";
            });
            acquirer.task();
            acquirer.awaitParkedIn(Semaphore.class, "acquire");
            assertFalse(acquirer.task().isDone());
            semaphore.release();
            assertEquals("acquired", acquirer.outcome());
            assertEquals(0, semaphore.availablePermits());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aCancelledAcquireTakesNoPermitAndLeavesTheQueue(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            Semaphore semaphore = new Semaphore(0);
            Elsewhere<String> acquirer = Elsewhere.start(opened.io(), () -> {
                semaphore.acquire();
                return "acquired";
            });
            acquirer.awaitParkedIn(Semaphore.class, "acquire");
            acquirer.task().cancel();
            assertInstanceOf(Cancelled.class, acquirer.outcome());
            semaphore.release();
            assertEquals(1, semaphore.availablePermits(), "the permit went to a cancelled waiter");
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void withPermitReleasesWhateverTheBodyDoes(Ios.Kind kind) {
        IllegalStateException boom = new IllegalStateException("boom");
        try (Ios.Opened opened = Ios.open(kind)) {
            Semaphore semaphore = new Semaphore(1);
            assertEquals(5, (int) opened.call(() -> semaphore.withPermit(() -> {
                assertEquals(0, semaphore.availablePermits());
                return 5;
            })));
            assertSame(
                    boom,
                    assertThrows(
                            IllegalStateException.class,
                            () -> opened.call(() -> semaphore.withPermit(() -> {
                                throw boom;
                            }))));
            assertEquals(1, semaphore.availablePermits());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void permitsLimitConcurrency(Ios.Kind kind) {
        int count = 50;
        try (Ios.Opened opened = Ios.open(kind)) {
            Semaphore semaphore = new Semaphore(3);
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger most = new AtomicInteger();
            Set<Thread> waiting = ConcurrentHashMap.newKeySet(); // the threads of tasks not holding a permit
            CompletableFuture<Void> release = new CompletableFuture<>();
            List<Future<Object>> tasks = opened.call(() -> {
                List<Future<Object>> started = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    started.add(Io.async(() -> {
                        waiting.add(Thread.currentThread());
                        return semaphore.withPermit(() -> {
                            waiting.remove(Thread.currentThread());
                            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            Future.from(release).await(); // the first holders keep their permits until released
                            inside.decrementAndGet();
                            return null;
                        });
                    }));
                }
                return started;
            });
            // Every task has started, and each one without a permit is parked in acquire (or one too
            // many got a permit): the holders are exactly the permits.
            Awaitility.await()
                    .atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(2))
                    .until(() -> inside.get() > 3
                            || inside.get() + waiting.size() == count
                                    && waiting.stream().allMatch(t -> Parked.at(t, Semaphore.class, "acquire")));
            assertEquals(3, inside.get(), "tasks holding a permit (" + waiting.size() + " without one)");
            release.complete(null);
            opened.call(() -> Futures.all(tasks));
            assertEquals(3, most.get());
            assertEquals(3, semaphore.availablePermits());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void cancelRacingReleaseNeverLosesOrDuplicatesAPermit(Ios.Kind kind) {
        int rounds = 2_000;
        try (Ios.Opened opened = Ios.open(kind)) {
            int[] outcomes = opened.call(() -> {
                int[] counts = new int[2]; // [acquired, cancelled]
                for (int round = 0; round < rounds; round++) {
                    Semaphore semaphore = new Semaphore(0);
                    java.util.concurrent.atomic.AtomicBoolean holds = new java.util.concurrent.atomic.AtomicBoolean();
                    AtomicReference<Thread> acquiring = new AtomicReference<>();
                    Future<Boolean> acquirer = Io.async(() -> {
                        acquiring.set(Thread.currentThread());
                        semaphore.acquire();
                        // Recorded here, not through the future: a value returned after cancel()
                        // is dropped, so "acquired, then cancelled" must not look like "not acquired".
                        holds.set(true);
                        return true;
                    });
                    while (round % 3 == 0
                            && !(acquiring.get() != null && Parked.at(acquiring.get(), Semaphore.class, "acquire"))) {
                        Io.yield(); // one round in three, the acquirer is parked before the race starts
                    }
                    Future<Object> releaser = null;
                    if (round % 2 == 0) {
                        releaser = Io.async(() -> {
                            semaphore.release();
                            return null;
                        });
                        acquirer.cancel();
                    } else {
                        acquirer.cancel();
                        releaser = Io.async(() -> {
                            semaphore.release();
                            return null;
                        });
                    }
                    releaser.await();
                    try {
                        acquirer.await();
                    } catch (Cancelled c) {
                        // cancelled: it holds the permit only if it got it before unwinding
                    }
                    int held = holds.get() ? 1 : 0;
                    if (semaphore.availablePermits() + held != 1) {
                        throw new AssertionError("round " + round + ": permits " + semaphore.availablePermits()
                                + " + held " + held + " != 1; " + semaphore);
                    }
                    counts[held == 1 ? 0 : 1]++;
                }
                return counts;
            });
            assertEquals(rounds, outcomes[0] + outcomes[1]);
            assertTrue(outcomes[1] > 0, "no round saw a cancelled acquire");
        }
    }
}
