package io.weft.fiber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Virtual threads that are not fibers: the threads user code starts inside a task run on the
 * JDK's default scheduler; the JDK's socket pollers run on a FiberIo whose fibers started them,
 * or whose fibers they wake while no other FiberIo runs them, and only while it can run them
 * promptly; closing a FiberIo never strands either.
 */
class ForeignVirtualThreadsTest {

    /** The carrier of the calling virtual thread, from its toString ("VirtualThread[#n]/runnable@carrier"). */
    private static String carrierName() {
        String self = Thread.currentThread().toString();
        return self.substring(self.indexOf('@') + 1);
    }

    @Test
    void aVirtualThreadStartedInsideATaskRunsOnTheDefaultScheduler() throws Exception {
        CompletableFuture<String> carrier = new CompletableFuture<>();
        try (FiberIo io = FiberIo.builder().workers(2).name("foreign-start").build()) {
            String taskCarrier = io.call(() -> {
                Thread.ofVirtual().start(() -> carrier.complete(carrierName())).join();
                return carrierName();
            });
            assertTrue(taskCarrier.startsWith("foreign-start-worker-"), taskCarrier);
        }
        String threadCarrier = carrier.get(20, TimeUnit.SECONDS);
        assertFalse(threadCarrier.startsWith("foreign-start-"), threadCarrier);
        assertTrue(threadCarrier.startsWith("ForkJoinPool-"), threadCarrier);
    }

    @Test
    void aVirtualThreadStartedInsideATaskFinishesAfterTheFiberIoCloses() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<String> finished = new CompletableFuture<>();
        Thread started;
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            started = io.call(() -> Thread.ofVirtual().start(() -> {
                try {
                    release.await(); // parks: its wake-up comes after the FiberIo has closed
                    finished.complete(carrierName());
                } catch (InterruptedException e) {
                    finished.completeExceptionally(e);
                }
            }));
        }
        release.countDown();
        assertTrue(finished.get(20, TimeUnit.SECONDS).startsWith("ForkJoinPool-"));
        assertTrue(started.join(java.time.Duration.ofSeconds(20)));
    }

    @Test
    void aVirtualThreadBuiltInsideATaskAndStartedAfterCloseRuns() throws Exception {
        CompletableFuture<String> ran = new CompletableFuture<>();
        Thread built;
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            built = io.call(() -> Thread.ofVirtual().unstarted(() -> ran.complete(carrierName())));
        }
        built.start();
        assertTrue(ran.get(20, TimeUnit.SECONDS).startsWith("ForkJoinPool-"));
    }

    @Test
    void aVirtualThreadPerTaskExecutorInsideATaskOutlivesTheFiberIo() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService executor;
        List<java.util.concurrent.Future<String>> results = new ArrayList<>();
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            executor = io.call(() -> {
                ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
                for (int i = 0; i < 8; i++) {
                    results.add(threads.submit(() -> {
                        release.await();
                        return carrierName();
                    }));
                }
                return threads;
            });
        }
        release.countDown();
        for (java.util.concurrent.Future<String> result : results) {
            assertTrue(result.get(20, TimeUnit.SECONDS).startsWith("ForkJoinPool-"));
        }
        executor.close();
        assertTrue(executor.isTerminated());
    }

    @Test
    void aVirtualThreadThatCopiesTheFibersSettingsIsStillNotAFiber() throws Exception {
        CompletableFuture<String> carrier = new CompletableFuture<>();
        try (FiberIo io = FiberIo.builder().workers(2).name("copied").build()) {
            io.run(() -> {
                Thread fiber = Thread.currentThread();
                Thread.ofVirtual()
                        .name(fiber.getName() + "-child")
                        .uncaughtExceptionHandler(fiber.getUncaughtExceptionHandler())
                        .start(() -> carrier.complete(carrierName()));
            });
        }
        assertTrue(carrier.get(20, TimeUnit.SECONDS).startsWith("ForkJoinPool-"));
    }

    @Test
    void fibersStillRunOnTheirFiberIo() {
        try (FiberIo io = FiberIo.builder().workers(2).name("own-fibers").build()) {
            List<String> carriers = io.call(() -> {
                List<Future<String>> tasks = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    tasks.add(Io.async(ForeignVirtualThreadsTest::carrierName));
                }
                List<String> names = new ArrayList<>();
                for (Future<String> task : tasks) {
                    names.add(task.await());
                }
                return names;
            });
            assertEquals(100, carriers.size());
            assertTrue(carriers.stream().allMatch(name -> name.startsWith("own-fibers-worker-")), carriers.toString());
        }
    }

    // ---------------------------------------------------------------- socket pollers (fresh JVMs)

    @ParameterizedTest
    @ValueSource(
            strings = {
                "fiber-then-plain",
                "plain-then-fiber",
                "second-fiber-io-adopts",
                "one-host-at-a-time",
                "unwatched-fiber-then-plain",
                "closed-host-is-collected",
                "closed-adopter-is-collected",
                "cycles-fiber-first",
                "cycles-plain-first",
                "plain-under-cpu-load",
                "plain-first-under-cpu-load"
            })
    void socketIoOnPlainVirtualThreadsIsUnaffectedByFiberIos(String scenario) throws Exception {
        ChildJvm.Result child = ChildJvm.run(true, 50, SocketScenarios.class, scenario);
        assertEquals(0, child.exitCode(), child.output());
        assertTrue(child.output().contains("scenario held: " + scenario), child.output());
    }

    // ---------------------------------------------------------------- fairness for socket wake-ups

    /**
     * A fiber blocked in a socket read resumes when its data arrives although every worker is
     * busy with fibers that compute and yield (Thread.yield) between slices (and, for comparison,
     * with no other fibers): the wake-up arrives through the Injector, which a busy worker checks
     * at least every 255 tasks. The peer answers each request only once the fiber is parked in
     * its read. Prints the latencies from that
     * write to the read's return (measured, not asserted).
     */
    @ParameterizedTest
    @ValueSource(ints = {0, 4})
    void aFiberBlockedInASocketReadResumesWhileOtherFibersCompute(int computingFibers) throws Exception {
        int rounds = 200;
        try (ServerSocket server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
                FiberIo io = FiberIo.builder().workers(2).build()) {
            AtomicBoolean stop = new AtomicBoolean();
            long[] latencies = new long[rounds];
            CompletableFuture<Thread> readerThread = new CompletableFuture<>();
            Future<Integer> reader = io.call(() -> Io.async(() -> {
                readerThread.complete(Thread.currentThread());
                try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                    InputStream in = socket.getInputStream();
                    OutputStream out = socket.getOutputStream();
                    int received = 0;
                    for (int i = 0; i < rounds; i++) {
                        out.write(1); // ask for the next byte
                        out.flush();
                        if (in.read() < 0) {
                            break;
                        }
                        latencies[i] = System.nanoTime(); // the writer stored its send time here
                        received++;
                    }
                    return received;
                }
            }));
            List<Future<Long>> computing = io.call(() -> {
                List<Future<Long>> tasks = new ArrayList<>();
                for (int i = 0; i < computingFibers; i++) {
                    tasks.add(Io.async(() -> {
                        long slices = 0;
                        while (!stop.get()) {
                            long until = System.nanoTime() + 20_000; // a 20 µs slice of computation
                            while (System.nanoTime() < until) {
                                Thread.onSpinWait();
                            }
                            Thread.yield();
                            slices++;
                        }
                        return slices;
                    }));
                }
                return tasks;
            });
            long[] sentAt = new long[rounds];
            Thread readingFiber = readerThread.get(20, TimeUnit.SECONDS);
            try (Socket peer = server.accept()) {
                InputStream in = peer.getInputStream();
                OutputStream out = peer.getOutputStream();
                for (int i = 0; i < rounds && in.read() >= 0; i++) {
                    // Answer only once the fiber is parked in its read: the latency is the wake-up's.
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    while (readingFiber.getState() != Thread.State.WAITING) {
                        assertTrue(System.nanoTime() < deadline, "the reading fiber never parked in its read");
                        Thread.onSpinWait();
                    }
                    sentAt[i] = System.nanoTime();
                    out.write(2);
                    out.flush();
                }
                assertEquals(rounds, reader.await(), "every byte reached the reading fiber");
            } finally {
                stop.set(true);
            }
            for (Future<Long> task : computing) {
                assertTrue(task.await() > 0, "the computing fibers ran");
            }
            long[] micros = new long[rounds];
            for (int i = 0; i < rounds; i++) {
                micros[i] = (latencies[i] - sentAt[i]) / 1_000;
            }
            Arrays.sort(micros);
            System.out.printf(
                    "socket wake-up, 2 workers, %d other fibers computing in 20 us slices: "
                            + "median %d us, p90 %d us, max %d us over %d reads%n",
                    computingFibers, micros[rounds / 2], micros[rounds * 9 / 10], micros[rounds - 1], rounds);
        }
    }
}
