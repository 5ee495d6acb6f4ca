package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Io#blocking} on FiberIo: the body blocks a pool thread, not a worker. */
class FiberBlockingTest {

    @Test
    void blockingBodiesLeaveTheWorkersFreeForOtherTasks() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).name("files").build()) {
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch entered = new CountDownLatch(4);
            Set<String> bodyThreads = ConcurrentHashMap.newKeySet();
            List<Future<Integer>> readers = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                int n = i;
                readers.add(io.spawn(() -> Io.blocking(() -> {
                    bodyThreads.add(Thread.currentThread().getName());
                    entered.countDown();
                    release.await(); // blocks its thread: a worker here would be lost
                    return n;
                })));
            }
            entered.await();
            // four bodies block, on two workers: a task still runs, and no reader is done
            assertEquals("probe", io.spawn(() -> "probe").await());
            assertTrue(readers.stream().noneMatch(Future::isDone));
            release.countDown();
            int sum = 0;
            for (Future<Integer> reader : readers) {
                sum += reader.await();
            }
            assertEquals(6, sum);
            assertEquals(4, bodyThreads.size());
            assertTrue(bodyThreads.stream().allMatch(n -> n.startsWith("files-blocking-")), bodyThreads::toString);
        }
    }

    @Test
    void aCancelledCallerStopsWaitingAndItsBodyIsInterrupted() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            CountDownLatch entered = new CountDownLatch(1);
            AtomicBoolean interrupted = new AtomicBoolean();
            Future<Object> caller = io.spawn(() -> Io.blocking(() -> {
                entered.countDown();
                try {
                    new CountDownLatch(1).await(); // blocks its thread until interrupted
                } catch (InterruptedException e) {
                    interrupted.set(true);
                }
                return "too late";
            }));
            entered.await();
            assertTrue(caller.cancel());
            assertThrows(Cancelled.class, caller::await);
            assertEquals(Future.State.CANCELLED, caller.state());
            await().until(interrupted::get);
        }
    }

    @Test
    void failuresAreReportedAsAnAwaitReportsThem() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            IllegalStateException boom = new IllegalStateException("boom");
            assertSame(
                    boom,
                    assertThrows(
                            IllegalStateException.class,
                            () -> io.call(() -> Io.blocking(() -> {
                                throw boom;
                            }))));
            CompletionException wrapped = assertThrows(
                    CompletionException.class,
                    () -> io.call(() -> Io.blocking(() -> {
                        throw new IOException("disk");
                    })));
            assertInstanceOf(IOException.class, wrapped.getCause());
        }
    }

    /**
     * An idle pool thread whose keep-alive poll timed out still counted toward the limit until
     * it left: a call that came in that window was queued (no thread waiting, no room for one),
     * and the thread left all the same. The body then waited for a busy thread, here for good,
     * since that thread's body waits for it. The hook stands for the timing: it sends the call
     * in from the idle thread's timed-out poll.
     */
    @Test
    void aBodyQueuedAsAnIdleThreadLeavesStillGetsAThread() throws Exception {
        BlockingPool pool = new BlockingPool("test", 2, getClass().getClassLoader());
        try {
            CountDownLatch bRan = new CountDownLatch(1);
            java.util.concurrent.FutureTask<String> a = twoThreadsOneWaitingForB(pool, bRan);
            pool.beforeTimedPoll(() -> {
                Thread.ofPlatform()
                        .daemon()
                        .start(() -> pool.call(() -> {
                            bRan.countDown();
                            return "b";
                        }));
                await().until(() -> pool.queued() == 1); // no thread waiting, no room: queued
            });
            assertEquals("d", pool.call(() -> "d")); // to the idle thread, whose next poll runs the hook
            assertEquals("a", a.get(30, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The same window from the queuing side: the call found no room, then, before it queued its
     * body, the idle thread left and looked at a queue still empty. The call now looks too: it
     * sees fewer threads than the limit after its enqueue and brings one to the queue.
     */
    @Test
    void aBodyQueuedJustAfterAnIdleThreadLeftStillGetsAThread() throws Exception {
        BlockingPool pool = new BlockingPool("test", 2, getClass().getClassLoader());
        try {
            CountDownLatch bRan = new CountDownLatch(1);
            java.util.concurrent.FutureTask<String> a = twoThreadsOneWaitingForB(pool, bRan);
            CountDownLatch inHandler = new CountDownLatch(1);
            CountDownLatch left = new CountDownLatch(1);
            pool.afterThreadLeft = () -> {
                pool.afterThreadLeft = null;
                left.countDown();
            };
            pool.beforeEnqueue = () -> {
                pool.beforeEnqueue = null;
                inHandler.countDown(); // b found no thread waiting and no room
                awaitLatch(left); // the idle thread leaves, and looks, before b is queued
            };
            pool.beforeTimedPoll(() -> {
                Thread.ofPlatform()
                        .daemon()
                        .start(() -> pool.call(() -> {
                            bRan.countDown();
                            return "b";
                        }));
                awaitLatch(inHandler); // this thread is still counted, and not waiting: b is refused room
            });
            assertEquals("d", pool.call(() -> "d")); // to the idle thread, whose next poll sends b in and leaves
            assertEquals("a", a.get(30, java.util.concurrent.TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Brings {@code pool} (at most 2 threads) to two threads, then starts body a on one of them,
     * waiting for {@code bRan}; returns a's caller's future once a runs. The other thread is idle.
     */
    private static java.util.concurrent.FutureTask<String> twoThreadsOneWaitingForB(
            BlockingPool pool, CountDownLatch bRan) throws InterruptedException {
        CountDownLatch bothIn = new CountDownLatch(2);
        CountDownLatch out = new CountDownLatch(1);
        List<Thread> warmUp = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            warmUp.add(Thread.ofPlatform()
                    .daemon()
                    .start(() -> pool.call(() -> {
                        bothIn.countDown();
                        out.await();
                        return null;
                    })));
        }
        bothIn.await();
        out.countDown();
        for (Thread t : warmUp) {
            t.join();
        }
        assertEquals(2, pool.threads(), "two threads, both idle");
        CountDownLatch aStarted = new CountDownLatch(1);
        java.util.concurrent.FutureTask<String> a = new java.util.concurrent.FutureTask<>(() -> pool.call(() -> {
            aStarted.countDown();
            bRan.await(); // a body that waits for another body
            return "a";
        }));
        Thread.ofPlatform().daemon().start(a);
        aStarted.await();
        return a;
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            assertTrue(latch.await(30, java.util.concurrent.TimeUnit.SECONDS), "the hook's step never came");
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The body's exception crossed to the caller as the failure of a future, whose rules changed
     * it: a RejectedExecutionException of its own came out as "the FiberIo is closed", a
     * CompletionException was unwrapped, a CancellationException became the caller's Cancelled.
     * Io.blocking promises the same instance, as BlockingIo's inline call gives.
     */
    @Test
    void theBodysOwnExceptionComesOutAsTheSameInstanceWhateverItIs() {
        List<RuntimeException> thrown = List.of(
                new RejectedExecutionException("the body's own executor refused"),
                new CompletionException(new IllegalArgumentException("a failed future joined")),
                new CancellationException("a cancelled future joined"));
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            for (RuntimeException own : thrown) {
                Throwable seen = io.call(() -> {
                    try {
                        Io.blocking(() -> {
                            throw own;
                        });
                        return null;
                    } catch (RuntimeException e) {
                        return e;
                    }
                });
                assertSame(own, seen, own.toString());
            }
            assertFalse(io.isClosed());
        }
    }

    @Test
    void idlePoolThreadsAreReusedAndAPlainThreadRunsTheBodyItself() {
        try (FiberIo io = FiberIo.builder().workers(1).name("reuse").build()) {
            Set<String> threads = io.call(() -> {
                Set<String> seen = ConcurrentHashMap.newKeySet();
                for (int i = 0; i < 20; i++) {
                    seen.add(Io.blocking(() -> Thread.currentThread().getName()));
                }
                return seen;
            });
            // one call after another: an idle thread takes the next (the one that just finished may
            // not be waiting yet, so a second thread can be made; a thread per call would be 20)
            assertTrue(threads.size() <= 3, threads::toString);
            String self = Thread.currentThread().getName();
            assertEquals(self, io.callBlocking(() -> Thread.currentThread().getName()));
        }
    }

    /**
     * A pool thread is made on whichever task's call needed it and then runs other tasks' bodies:
     * it used to inherit that task's InheritableThreadLocal values and context class loader, which
     * every later body on it then saw.
     */
    @Test
    void poolThreadsCarryNoValuesOrLoaderOfTheTaskThatMadeThem() {
        InheritableThreadLocal<String> tenant = new InheritableThreadLocal<>();
        ClassLoader own = Thread.currentThread().getContextClassLoader();
        ClassLoader tasks = new ClassLoader(own) {};
        try (FiberIo io = FiberIo.builder().workers(1).blockingThreads(1).build()) {
            String made = io.call(() -> {
                tenant.set("A");
                Thread.currentThread().setContextClassLoader(tasks);
                return Io.blocking(() -> Thread.currentThread().getName()); // makes the one pool thread
            });
            List<Object> seen = io.call(() -> Io.blocking(() -> {
                Thread self = Thread.currentThread();
                return List.of(self.getName(), String.valueOf(tenant.get()), self.getContextClassLoader());
            }));
            assertEquals(List.of(made, "null", own), seen);
        }
    }

    /**
     * A blocking body still queued when the FiberIo closes never runs: its caller used to wait for
     * good when shielded (an unshielded one is cancelled and stops waiting). It now fails, as the
     * close begins, as a call after the close does (IllegalStateException), and the caller ends
     * within the close's timeout.
     */
    @Test
    void aShieldedCallerWhoseBodyWasQueuedAtCloseGetsAnAnswer() throws Exception {
        FiberIo io = FiberIo.builder()
                .workers(1)
                .blockingThreads(1)
                .closeTimeout(Duration.ofMillis(200))
                .build();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Object> busy = io.spawn(() -> Io.blocking(() -> {
            entered.countDown();
            while (true) { // the one thread stays busy through the close: this body ignores interrupts
                try {
                    release.await();
                    return null;
                } catch (InterruptedException ignored) {
                    // keep waiting
                }
            }
        }));
        entered.await();
        AtomicReference<Thread> queuer = new AtomicReference<>();
        AtomicBoolean ran = new AtomicBoolean();
        Future<Object> shielded = io.spawn(() -> Io.shield(() -> {
            queuer.set(Thread.currentThread());
            return Io.blocking(() -> ran.getAndSet(true)); // queued behind the busy body
        }));
        await().until(() -> queuer.get() != null && queuer.get().getState() == Thread.State.WAITING);
        io.close(); // the queued body fails as the close begins: the shielded caller ends in time
        assertTrue(shielded.isDone());
        IllegalStateException closed = assertInstanceOf(IllegalStateException.class, shielded.exceptionNow());
        assertInstanceOf(RejectedExecutionException.class, closed.getCause(), closed::toString);
        assertFalse(ran.get(), "the queued body never ran");
        assertEquals(Future.State.CANCELLED, busy.state());
        release.countDown();
    }

    @Test
    void closingTheFiberIoInterruptsTheBodiesStillRunning() throws Exception {
        FiberIo io = FiberIo.builder().workers(1).build();
        CountDownLatch entered = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        Future<Object> caller = io.spawn(() -> Io.blocking(() -> {
            entered.countDown();
            try {
                new CountDownLatch(1).await(); // a body that never ends by itself
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
            return null;
        }));
        entered.await();
        io.close(); // cancels the caller (it stops waiting), then stops the pool
        assertEquals(Future.State.CANCELLED, caller.state());
        await().until(interrupted::get);
        assertThrows(NullPointerException.class, () -> Io.blocking(null));
    }
}
