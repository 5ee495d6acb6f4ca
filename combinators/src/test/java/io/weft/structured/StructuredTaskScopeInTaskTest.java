package io.weft.structured;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.StructuredTaskScope;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 13, part 5: a {@link StructuredTaskScope} inside a Weft task. Its forks inherit the task's
 * scoped values, so they see its installed Io; they are not the task (they wait as plain threads),
 * so they never share its park slot, and cancelling the task reaches every fork: the task's
 * thread, blocked in {@code join}, is interrupted, the scope's close interrupts the forks, and a
 * fork parked at a Weft suspend point ends with {@link Cancelled}. (StructuredTaskScope is a
 * preview API in JDK 25: this module's tests compile and run with preview enabled.)
 */
class StructuredTaskScopeInTaskTest {

    private static ConditionFactory eventually() {
        return Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(2));
    }

    private static boolean parked(Thread thread) {
        return thread != null && thread.getState() == Thread.State.WAITING;
    }

    /** Starts {@code body} as a task of {@code io} from a plain thread (an inline Io blocks that thread). */
    private static void startTask(Io io, java.util.concurrent.Callable<Void> body) {
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Io.with(io).run(() -> Io.async(body));
            } catch (RuntimeException ignored) {
                // the task's outcome is read from its future
            }
        });
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void cancellingTheTaskReachesEveryForkParkedAtAWeftSuspendPoint(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Io io = opened.io();
            AtomicReference<Future<?>> task = new AtomicReference<>();
            AtomicReference<Thread> taskThread = new AtomicReference<>();
            Set<Thread> forks = ConcurrentHashMap.newKeySet();
            List<String> seenInForks = new CopyOnWriteArrayList<>();
            AtomicInteger forksCancelled = new AtomicInteger();
            startTask(io, () -> {
                task.set(Io.currentTask().orElseThrow());
                taskThread.set(Thread.currentThread());
                try (var scope = StructuredTaskScope.open()) {
                    for (int i = 0; i < 2; i++) {
                        scope.fork(() -> {
                            forks.add(Thread.currentThread());
                            seenInForks.add(
                                    "task " + Io.currentTask().isPresent() + ", same Io " + (Io.current() == io));
                            try {
                                Io.current().suspendRaw(ParkToken.create()); // a Weft wait nobody readies
                            } catch (Cancelled expected) {
                                forksCancelled.incrementAndGet();
                                throw expected;
                            }
                            return null;
                        });
                    }
                    scope.join(); // a JDK wait: the task's cancel interrupts it
                }
                return null;
            });
            eventually()
                    .until(() -> forks.size() == 2
                            && forks.stream().allMatch(StructuredTaskScopeInTaskTest::parked)
                            && parked(taskThread.get()));

            assertTrue(task.get().cancel());
            eventually().until(task.get()::isDone);
            assertEquals(Future.State.CANCELLED, task.get().state(), String.valueOf(task.get()));
            assertEquals(2, forksCancelled.get(), "every fork's Weft wait ended with Cancelled");
            assertEquals(List.of("task false, same Io true", "task false, same Io true"), seenInForks);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aForkParkingInWeftDoesNotTakeTheTasksParkSlot(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Io io = opened.io();
            AtomicReference<Future<?>> task = new AtomicReference<>();
            AtomicReference<Thread> taskThread = new AtomicReference<>();
            AtomicReference<Thread> fork = new AtomicReference<>();
            AtomicBoolean taskWoke = new AtomicBoolean();
            CountDownLatch release = new CountDownLatch(1);
            startTask(io, () -> {
                task.set(Io.currentTask().orElseThrow());
                taskThread.set(Thread.currentThread());
                try (var scope = StructuredTaskScope.open()) {
                    scope.fork(() -> {
                        fork.set(Thread.currentThread());
                        while (!(parked(taskThread.get()) && LockSupport.getBlocker(taskThread.get()) != null)) {
                            Thread.onSpinWait(); // park after the task did, as the one that would overwrite it
                        }
                        try {
                            Io.current().suspendRaw(ParkToken.create());
                        } catch (Cancelled interrupted) {
                            // a plain thread's Weft wait ends on interrupt; then it waits outside Weft,
                            // so nothing but the task's own slot can wake the task
                            Thread.interrupted(); // (ParkToken set the flag again; the latch would see it)
                        }
                        release.await();
                        return null;
                    });
                    try {
                        Io.current().suspendRaw(ParkToken.create()); // the task's own Weft wait
                    } catch (Cancelled cancelled) {
                        taskWoke.set(true); // reached although a fork parked after it
                        fork.get().interrupt();
                        release.countDown();
                        scope.join();
                        throw cancelled;
                    }
                }
                return null;
            });
            eventually().until(() -> parked(fork.get()) && parked(taskThread.get()));

            task.get().cancel();
            eventually().until(task.get()::isDone);
            assertTrue(taskWoke.get());
            assertEquals(Future.State.CANCELLED, task.get().state(), String.valueOf(task.get()));
        }
    }

    /**
     * A fork that runs a task itself (under an inline Io, Io.async runs on the fork's thread) makes
     * that task current on its own thread only: the parent task, still running, is still current
     * on its thread, and the fork is no task again once its task ended. (The fork inherits the
     * parent's context binding; writing the task into it would make the parent see the fork's task.)
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aTaskRunOnAForksThreadIsCurrentThereAndNotInTheParent(Ios.Kind kind) throws Exception {
        try (Ios.Opened opened = Ios.open(kind)) {
            Io io = opened.io();
            CountDownLatch forkTaskRunning = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<List<Boolean>> seen = new CompletableFuture<>();
            startTask(io, () -> {
                Future<?> parent = Io.currentTask().orElseThrow();
                try (var scope = StructuredTaskScope.open()) {
                    var forkSaw = scope.fork(() -> {
                        Future<Boolean> inner = Io.async(() -> {
                            forkTaskRunning.countDown();
                            release.await();
                            return Io.currentTask().isPresent()
                                    && Io.currentTask().get() != parent;
                        });
                        boolean innerSawItself = inner.await();
                        return innerSawItself && Io.currentTask().isEmpty();
                    });
                    forkTaskRunning.await();
                    boolean parentStillCurrent = Io.currentTask().orElse(null) == parent;
                    release.countDown();
                    scope.join();
                    seen.complete(List.of(parentStillCurrent, forkSaw.get()));
                } catch (Throwable t) {
                    seen.completeExceptionally(t);
                    throw t;
                }
                return null;
            });
            assertEquals(List.of(true, true), seen.get(20, TimeUnit.SECONDS));
        }
    }
}
