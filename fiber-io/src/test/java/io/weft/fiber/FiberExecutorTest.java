package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.weft.Cancelled;
import io.weft.Io;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** {@link FiberIo#executor()}: JDK-style code on Weft tasks, with the JDK's executor semantics. */
class FiberExecutorTest {

    /** Whether the calling thread runs a task of {@code io}. */
    private static boolean inTaskOf(FiberIo io) {
        return Thread.currentThread().isVirtual()
                && Io.current() == io
                && Io.currentTask().isPresent();
    }

    @Test
    void completableFutureSupplyAsyncRunsOnATaskOfTheFiberIo() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            ScheduledExecutorService executor = io.executor();
            CompletableFuture<Integer> sum = CompletableFuture.supplyAsync(
                            () -> {
                                assertTrue(inTaskOf(io));
                                // a task: it may spawn and await Weft tasks
                                return Io.async(() -> 20).await() + 1;
                            },
                            executor)
                    .thenApplyAsync(
                            n -> {
                                assertTrue(inTaskOf(io));
                                return n * 2;
                            },
                            executor);
            assertEquals(42, sum.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void cancellingASubmissionIsDoneAtOnceAndTheTaskUnwinds() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            ScheduledExecutorService executor = io.executor();
            CountDownLatch started = new CountDownLatch(1);
            AtomicBoolean unwound = new AtomicBoolean();
            Future<String> parked = executor.submit(() -> {
                try {
                    started.countDown();
                    Io.sleep(Duration.ofDays(1)); // a Weft suspend point: cancel wakes it
                    return "slept";
                } finally {
                    unwound.set(true);
                }
            });
            started.await();
            assertTrue(parked.cancel(false));
            assertTrue(parked.isDone());
            assertTrue(parked.isCancelled());
            assertThrows(CancellationException.class, parked::get);
            assertFalse(parked.cancel(true), "a second cancel finds it done");
            await().until(unwound::get);
            await().until(() -> io.liveTasks() == 0);
        }
    }

    @Test
    void aSubmissionsFailureIsInItsFutureAndAnExecutedOnesGoesToTheHandler() throws Exception {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (FiberIo io = FiberIo.builder()
                .workers(1)
                .uncaughtExceptionHandler((thread, e) -> reported.add(e))
                .build()) {
            ScheduledExecutorService executor = io.executor();
            IllegalStateException boom = new IllegalStateException("boom");
            Future<Object> failed = executor.submit(() -> {
                throw boom;
            });
            ExecutionException e = assertThrows(ExecutionException.class, failed::get);
            assertSame(boom, e.getCause());
            Future<Object> checked = executor.submit(() -> {
                throw new IOException("disk");
            });
            assertInstanceOf(
                    IOException.class,
                    assertThrows(ExecutionException.class, checked::get).getCause());
            assertEquals(List.of(), reported, "a submission's failure is its future's, not the handler's");

            executor.execute(() -> {
                throw boom;
            });
            await().until(() -> reported.size() == 1);
            assertSame(boom, reported.get(0));

            // a Cancelled that is not the task's own is a failure too, as for Io.launch (it was dropped)
            executor.execute(cancelledElsewhere()::await);
            await().until(() -> reported.size() == 2);
            assertInstanceOf(Cancelled.class, reported.get(1));
        }
    }

    /** A Weft future someone cancelled. */
    private static io.weft.Future<String> cancelledElsewhere() {
        io.weft.Future<String> future = io.weft.Future.from(new CompletableFuture<>());
        future.cancel();
        return future;
    }

    @Test
    void shutdownRefusesNewWorkAndTerminatesWhenTheRunningTasksEnd() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            ScheduledExecutorService executor = io.executor();
            CompletableFuture<String> gate = new CompletableFuture<>();
            Future<String> running = executor.submit(() -> gate.get() + "!");
            executor.shutdown();
            assertTrue(executor.isShutdown());
            assertFalse(executor.isTerminated());
            assertThrows(RejectedExecutionException.class, () -> executor.execute(() -> {}));
            assertThrows(RejectedExecutionException.class, () -> executor.submit(() -> 1));
            assertFalse(executor.awaitTermination(20, TimeUnit.MILLISECONDS));
            gate.complete("done");
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
            assertTrue(executor.isTerminated());
            assertEquals("done!", running.get());
            // another executor of the same FiberIo is not affected
            assertEquals(7, io.executor().submit(() -> 7).get());
        }
    }

    @Test
    void shutdownNowCancelsTheRunningAndHandsBackWhatNeverBegan() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).build()) { // real clock: a day never comes
            ScheduledExecutorService executor = io.executor();
            List<String> ran = new CopyOnWriteArrayList<>();
            CountDownLatch started = new CountDownLatch(1);
            Future<?> running = executor.submit(() -> {
                started.countDown();
                Io.sleep(Duration.ofDays(1));
                ran.add("running");
                return null;
            });
            started.await();
            ScheduledFuture<String> delayed =
                    executor.schedule(() -> "later", 1, TimeUnit.DAYS); // its task sleeps: not begun
            Runnable executedLater = () -> ran.add("executed");
            executor.schedule(executedLater, 2, TimeUnit.DAYS);

            List<Runnable> neverRan = executor.shutdownNow();

            assertEquals(2, neverRan.size(), () -> "handed back: " + neverRan);
            assertTrue(running.isCancelled());
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
            assertFalse(delayed.isDone(), "handed back, so not run and not cancelled: whoever holds it runs it");
            for (Runnable r : neverRan) {
                r.run();
            }
            assertEquals("later", delayed.get());
            assertEquals(List.of("executed"), ran);
        }
    }

    /**
     * shutdownNow races the tasks starting: each submission must be run by its task or handed back,
     * never both (a double run) and never neither (a lost task). The task's claim and shutdownNow's
     * drain are one CAS on the same word; with a task that runs without claiming, items run twice.
     */
    @Test
    void shutdownNowRacingTheStartsRunsEachSubmissionExactlyOnce() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            for (int round = 0; round < 200; round++) {
                ScheduledExecutorService executor = io.executor();
                int n = 50;
                java.util.concurrent.atomic.AtomicIntegerArray runs =
                        new java.util.concurrent.atomic.AtomicIntegerArray(n);
                List<Future<Integer>> futures = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int id = i;
                    if (i % 2 == 0) {
                        futures.add(executor.submit(() -> {
                            runs.incrementAndGet(id);
                            return id;
                        }));
                    } else {
                        executor.execute(() -> runs.incrementAndGet(id));
                    }
                }
                for (Runnable handedBack : executor.shutdownNow()) {
                    handedBack.run();
                }
                assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
                for (int i = 0; i < n; i++) {
                    assertEquals(1, runs.get(i), "round " + round + ", submission " + i);
                }
                for (Future<Integer> f : futures) {
                    // run by its task (a value, or cancelled if shutdownNow came as it returned) or by us
                    assertTrue(f.isDone());
                }
            }
        }
    }

    /**
     * A submitter racing shutdownNow: a submission is refused (and never runs), or accepted (and
     * runs exactly once, by its task or from shutdownNow's list). Before the REJECTED claim, one
     * refused after shutdownNow had drained it ran from the list although its submitter was told no.
     */
    @Test
    void aSubmissionRacingShutdownNowIsRefusedOrRunsOnce() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            for (int round = 0; round < 100; round++) {
                ScheduledExecutorService executor = io.executor();
                java.util.concurrent.atomic.AtomicIntegerArray runs =
                        new java.util.concurrent.atomic.AtomicIntegerArray(10_000);
                Set<Integer> refused = ConcurrentHashMap.newKeySet();
                CountDownLatch started = new CountDownLatch(1);
                Thread submitter = Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 10_000; i++) {
                        int id = i;
                        try {
                            executor.execute(() -> runs.incrementAndGet(id));
                        } catch (RejectedExecutionException e) {
                            refused.add(id);
                        }
                        if (i == 10) {
                            started.countDown();
                        }
                    }
                });
                started.await();
                List<Runnable> handedBack = executor.shutdownNow();
                submitter.join();
                handedBack.forEach(Runnable::run);
                assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
                for (int i = 0; i < 10_000; i++) {
                    int expected = refused.contains(i) ? 0 : 1;
                    assertEquals(expected, runs.get(i), "round " + round + ", submission " + i);
                }
            }
        }
    }

    /** A fixed-rate task that runs longer than its period still ends when cancelled. */
    @Test
    void aFixedRateTaskBehindItsScheduleIsStillCancellable() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            ScheduledExecutorService executor = io.executor();
            java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
            ScheduledFuture<?> late = executor.scheduleAtFixedRate(
                    () -> {
                        runs.incrementAndGet();
                        long until = System.nanoTime() + 3_000_000;
                        while (System.nanoTime() < until) {
                            Thread.onSpinWait(); // 3 ms of work for a 1 ms period: always behind
                        }
                    },
                    0,
                    1,
                    TimeUnit.MILLISECONDS);
            await().until(() -> runs.get() >= 3);
            assertTrue(late.cancel(true));
            executor.shutdown();
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS), "the late task ended");
            assertEquals("ran", io.spawn(() -> "ran").await(), "and it let the worker go");
        }
    }

    /**
     * shutdown is an orderly shutdown: a periodic run in progress finishes, uninterrupted, and
     * no run follows it (the JDK's scheduled pool does the same). It used to be cancelled with
     * an interrupt, cutting the run off mid-work.
     */
    @Test
    void shutdownLetsAPeriodicRunInProgressFinishAndRunsItNoMore() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            ScheduledExecutorService executor = io.executor();
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicBoolean interrupted = new java.util.concurrent.atomic.AtomicBoolean();
            ScheduledFuture<?> periodic = executor.scheduleAtFixedRate(
                    () -> {
                        runs.incrementAndGet();
                        started.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            interrupted.set(true);
                        }
                    },
                    0,
                    1,
                    TimeUnit.MILLISECONDS);
            started.await();
            executor.shutdown();
            assertFalse(periodic.isDone(), "the run in progress was cut off");
            release.countDown();
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
            assertFalse(interrupted.get(), "the run in progress was interrupted");
            assertTrue(periodic.isCancelled());
            assertEquals(1, runs.get());
        }
    }

    /**
     * A delay is never cut short by the clock's truncation: a task scheduled at a reading of 4
     * with a 1 ms delay is due at 5, and used to run as soon as the reading was 5, which can
     * be a tenth of a millisecond after it was scheduled. It now waits as a timer does, until
     * the reading has passed its due time. The worker is kept busy for half a millisecond first,
     * so that the task often starts in the next millisecond.
     */
    @Test
    void aDelayedTaskNeverRunsBeforeItsDelayHasPassed() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            ScheduledExecutorService executor = io.executor();
            for (int round = 0; round < 100; round++) {
                executor.execute(() -> {
                    long until = System.nanoTime() + 500_000;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                });
                long scheduledAt = System.nanoTime();
                ScheduledFuture<Long> after =
                        executor.schedule(() -> System.nanoTime() - scheduledAt, 1, TimeUnit.MILLISECONDS);
                long waited = after.get();
                assertTrue(waited >= 1_000_000, "round " + round + ": ran after " + waited + " ns");
            }
        }
    }

    @Test
    void delaysAndPeriodsRunOnTheVirtualClock() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            ScheduledExecutorService executor = io.executor();
            List<Long> rate = new CopyOnWriteArrayList<>();
            List<Long> delay = new CopyOnWriteArrayList<>();
            io.run(() -> {
                ScheduledFuture<Long> once = executor.schedule(io::nowMs, 30, TimeUnit.MILLISECONDS);
                ScheduledFuture<?> atRate =
                        executor.scheduleAtFixedRate(() -> rate.add(io.nowMs()), 100, 50, TimeUnit.MILLISECONDS);
                ScheduledFuture<?> withDelay = executor.scheduleWithFixedDelay(
                        () -> {
                            delay.add(io.nowMs());
                            Io.sleep(Duration.ofMillis(20)); // the next run counts from this one's end
                        },
                        100,
                        50,
                        TimeUnit.MILLISECONDS);
                assertEquals(100, atRate.getDelay(TimeUnit.MILLISECONDS));
                Io.sleep(Duration.ofMillis(260));
                atRate.cancel(true);
                withDelay.cancel(true);
                assertEquals(30L, Io.async(() -> once.get()).await());
            });
            assertEquals(List.of(100L, 150L, 200L, 250L), rate);
            assertEquals(List.of(100L, 170L, 240L), delay);
            await().until(() -> io.liveTasks() == 0);
        }
    }

    @Test
    void aPeriodicTaskStopsAtItsFirstFailureAndShutdownEndsPeriodicTasks() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            ScheduledExecutorService executor = io.executor();
            List<Long> runs = new CopyOnWriteArrayList<>();
            IllegalStateException third = new IllegalStateException("third run");
            ScheduledFuture<?> failing = executor.scheduleAtFixedRate(
                    () -> {
                        runs.add(io.nowMs());
                        if (runs.size() == 3) {
                            throw third;
                        }
                    },
                    0,
                    10,
                    TimeUnit.MILLISECONDS);
            assertSame(
                    third, assertThrows(ExecutionException.class, failing::get).getCause());
            assertEquals(List.of(0L, 10L, 20L), runs);

            ScheduledFuture<?> forever = executor.scheduleWithFixedDelay(() -> {}, 0, 5, TimeUnit.MILLISECONDS);
            ScheduledFuture<String> oneShot = executor.schedule(() -> "still runs", 1, TimeUnit.SECONDS);
            executor.shutdown();
            await().until(forever::isCancelled); // a run in progress as shutdown came finishes first
            assertEquals("still runs", oneShot.get());
            assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void invokeAllAndInvokeAny() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            ScheduledExecutorService executor = io.executor();
            List<Callable<Integer>> tasks = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                int n = i;
                tasks.add(() -> n * n);
            }
            int sum = 0;
            for (Future<Integer> f : executor.invokeAll(tasks)) {
                assertTrue(f.isDone());
                sum += f.get();
            }
            assertEquals(285, sum);

            // timed invokeAll: the slow one is cancelled when time is up
            List<Future<String>> timed = executor.invokeAll(
                    List.of(() -> "quick", () -> {
                        Io.sleep(Duration.ofDays(1));
                        return "slow";
                    }),
                    2,
                    TimeUnit.SECONDS);
            assertEquals("quick", timed.get(0).get());
            assertTrue(timed.get(1).isCancelled());

            // invokeAny: the first success wins, failures are skipped, the rest are cancelled. The
            // winner waits for the loser to start: one cancelled before it started would never
            // run its finally (the two run on different workers, in either order).
            AtomicBoolean loserUnwound = new AtomicBoolean();
            CountDownLatch loserStarted = new CountDownLatch(1);
            String any = executor.invokeAny(List.of(
                    () -> {
                        throw new IllegalStateException("fails");
                    },
                    () -> {
                        try {
                            loserStarted.countDown();
                            Io.sleep(Duration.ofDays(1));
                            return "never";
                        } finally {
                            loserUnwound.set(true);
                        }
                    },
                    () -> {
                        loserStarted.await();
                        return "wins";
                    }));
            assertEquals("wins", any);
            await().until(loserUnwound::get);

            ExecutionException allFailed = assertThrows(
                    ExecutionException.class,
                    () -> executor.invokeAny(List.<Callable<String>>of(() -> {
                        throw new IllegalStateException("only");
                    })));
            assertEquals("only", allFailed.getCause().getMessage());
            assertThrows(IllegalArgumentException.class, () -> executor.invokeAny(List.<Callable<String>>of()));
        }
    }

    @Test
    void closingTheFiberIoShutsItsExecutorsDown() throws Exception {
        FiberIo io = FiberIo.builder().workers(1).build();
        ScheduledExecutorService executor = io.executor();
        CountDownLatch started = new CountDownLatch(1);
        Future<?> parked = executor.submit(() -> {
            started.countDown();
            Io.sleep(Duration.ofDays(1));
            return null;
        });
        started.await();
        io.close();
        assertTrue(executor.isShutdown());
        assertTrue(executor.awaitTermination(10, TimeUnit.SECONDS));
        assertTrue(parked.isCancelled());
        assertThrows(RejectedExecutionException.class, () -> executor.execute(() -> {}));
        ScheduledExecutorService late = io.executor();
        assertTrue(late.isShutdown());
        assertTrue(late.isTerminated());
    }

    @Test
    void badInputIsRefusedAtTheCall() {
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            ScheduledExecutorService executor = io.executor();
            assertThrows(NullPointerException.class, () -> executor.execute(null));
            assertThrows(NullPointerException.class, () -> executor.submit((Callable<?>) null));
            assertThrows(NullPointerException.class, () -> executor.schedule(() -> {}, 1, null));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> executor.scheduleAtFixedRate(() -> {}, 0, 0, TimeUnit.MILLISECONDS));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> executor.scheduleWithFixedDelay(() -> {}, 0, -1, TimeUnit.MILLISECONDS));
        }
    }

    @Test
    void httpClientAndServerRunTheirCallbacksOnTheFiberIo() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            Set<Boolean> handlersInTasks = ConcurrentHashMap.newKeySet();
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.setExecutor(io.executor());
            server.createContext("/square", exchange -> {
                handlersInTasks.add(inTaskOf(io));
                int n = Integer.parseInt(exchange.getRequestURI().getQuery());
                byte[] body = Integer.toString(n * n).getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.start();
            try (HttpClient client =
                    HttpClient.newBuilder().executor(io.executor()).build()) {
                String base = "http://127.0.0.1:" + server.getAddress().getPort() + "/square?";
                Set<Boolean> callbacksInTasks = ConcurrentHashMap.newKeySet();
                List<CompletableFuture<Integer>> answers = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    answers.add(client.sendAsync(
                                    HttpRequest.newBuilder(URI.create(base + i)).build(),
                                    HttpResponse.BodyHandlers.ofString())
                            .thenApplyAsync(
                                    response -> {
                                        callbacksInTasks.add(inTaskOf(io));
                                        return Integer.parseInt(response.body());
                                    },
                                    io.executor()));
                }
                for (int i = 0; i < 50; i++) {
                    assertEquals(i * i, answers.get(i).get(30, TimeUnit.SECONDS));
                }
                assertEquals(Set.of(true), callbacksInTasks);
                // a request made from inside a task: the task blocks on the response (its fiber unmounts)
                String fromTask = io.call(() -> client.send(
                                HttpRequest.newBuilder(URI.create(base + 12)).build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body());
                assertEquals("144", fromTask);
            } finally {
                server.stop(0);
            }
            assertEquals(Set.of(true), handlersInTasks);
        }
    }

    @Test
    void reactorSchedulersRunOnTheFiberIoAndDelaysFollowItsVirtualClock() {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Scheduler scheduler = Schedulers.fromExecutorService(io.executor(), "weft");
            Set<Boolean> inTasks = ConcurrentHashMap.newKeySet();
            Integer sum = Flux.range(1, 1_000)
                    .publishOn(scheduler)
                    .map(n -> {
                        inTasks.add(inTaskOf(io));
                        return n;
                    })
                    .reduce(0, Integer::sum)
                    .block(Duration.ofSeconds(30));
            assertEquals(500_500, sum);
            assertEquals(Set.of(true), inTasks);

            // an hour on the FiberIo's virtual clock: the task sleeps, nothing else can run, time jumps
            AtomicReference<Long> firedAt = new AtomicReference<>();
            Mono.delay(Duration.ofHours(1), scheduler)
                    .doOnNext(tick -> firedAt.set(io.nowMs()))
                    .block(Duration.ofSeconds(30));
            assertEquals(Duration.ofHours(1).toMillis(), firedAt.get());

            scheduler.dispose(); // shuts its executor down, not the FiberIo
            assertEquals(3, io.call(() -> 1 + 2));
        }
    }
}
