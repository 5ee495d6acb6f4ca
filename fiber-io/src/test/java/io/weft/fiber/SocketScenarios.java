package io.weft.fiber;

import static org.awaitility.Awaitility.await;

import io.weft.Future;
import io.weft.Io;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Socket I/O on fibers and on plain virtual threads in one JVM, run by {@link ForeignVirtualThreadsTest}
 * in a fresh JVM each: the JDK starts its socket pollers once per JVM, from the first virtual
 * thread that blocks on a socket, so only a fresh JVM shows where they end up. In the scenarios
 * whose name starts with {@code plain} (and in {@code cycles-plain-first}) a plain virtual thread
 * starts them, and a FiberIo adopts them when they wake its fibers; in the others the first socket
 * I/O of the JVM happens on a fiber (the case that stranded the pollers). Either way, closing
 * FiberIos must not disturb them. Exits 0 when the scenario held, 1 with the reason otherwise (a
 * hang is the child's timeout).
 */
final class SocketScenarios {
    private static final int REQUESTS = 50;
    private static final long WAIT_SECONDS = 20;

    public static void main(String[] args) throws Exception {
        // JDK properties, read when the pollers start. Sub-pollers that are virtual threads (the
        // mode Linux has by default; other systems use platform poller threads unless told):
        // the scenarios test hosting them on every system. One read poller: an adopted poller is
        // the one that readied the fiber, and the plain threads' sockets must reach that one
        // too, whatever file descriptors they get and however many cores the machine has.
        System.setProperty("jdk.pollerMode", "2");
        System.setProperty("jdk.readPollers", "1");
        try (EchoServer server = new EchoServer()) {
            switch (args[0]) {
                case "fiber-then-plain" -> {
                    FiberIo closed = fiberIoDoesSocketIo(server, 1, FiberIo.builder());
                    check(closed.hostedPollers() > 0, "the FiberIo that started the pollers ran them");
                    plainVirtualThreadsDoSocketIo(server, 1);
                }
                case "closed-host-is-collected" -> {
                    // The pollers it hosted no longer lead to its scheduler once it is closed (the
                    // write pollers, never used here, stay parked for good)
                    WeakReference<Object> closed = new WeakReference<>(
                            fiberIoDoesSocketIo(server, 1, FiberIo.builder()).schedulerForTests());
                    plainVirtualThreadsDoSocketIo(server, 1);
                    awaitCollected(closed);
                }
                case "plain-then-fiber" -> {
                    // The pollers start on the default scheduler; a FiberIo whose fiber they wake
                    // adopts them, and gives them back when it closes
                    fiberIoAdoptsThePollersAPlainThreadStarted(server);
                    plainVirtualThreadsDoSocketIo(server, 1);
                }
                case "second-fiber-io-adopts" -> {
                    FiberIo first = fiberIoDoesSocketIo(server, 1, FiberIo.builder());
                    check(first.hostedPollers() > 0, "the FiberIo that started the pollers ran them");
                    FiberIo second = fiberIoDoesSocketIo(server, 2, FiberIo.builder());
                    check(second.hostedPollers() > 0, "the next FiberIo adopted the pollers the first gave back");
                    plainVirtualThreadsDoSocketIo(server, 1);
                }
                case "one-host-at-a-time" -> {
                    // A FiberIo open throughout never takes a poller from one that runs it, and
                    // adopts it once that one has closed. Told apart by thread: each sub-poller
                    // is adopted on its own, so the bystander may adopt one the host never ran
                    // (the write poller, when only a bystander's connect has to wait for it).
                    try (FiberIo bystander = FiberIo.builder().workers(2).build()) {
                        FiberIo starter = fiberIoDoesSocketIo(server, 1, FiberIo.builder()); // closed now
                        check(starter.hostedPollers() > 0, "the FiberIo that started the pollers ran them");
                        List<Thread> hostRan;
                        try (FiberIo host = FiberIo.builder().workers(2).build()) {
                            check(fibersDoSocketIo(host, server, 2), "the host's fibers echoed");
                            hostRan = host.hostedPollerThreads();
                            check(!hostRan.isEmpty(), "a FiberIo adopted the released pollers");
                            check(fibersDoSocketIo(bystander, server, 2), "the bystander's fibers echoed");
                            List<Thread> taken = bystander.hostedPollerThreads().stream()
                                    .filter(hostRan::contains)
                                    .toList();
                            check(taken.isEmpty(), "a FiberIo took pollers another one runs: " + taken);
                            check(
                                    host.hostedPollerThreads().equals(hostRan),
                                    "the host lost pollers: " + hostRan + " became " + host.hostedPollerThreads());
                        }
                        check(fibersDoSocketIo(bystander, server, 2), "the bystander's fibers echoed");
                        check(
                                bystander.hostedPollerThreads().stream().anyMatch(hostRan::contains),
                                "the bystander adopted none of " + hostRan + " once the host closed");
                    }
                    plainVirtualThreadsDoSocketIo(server, 1);
                }
                case "closed-adopter-is-collected" -> {
                    WeakReference<Object> closed = new WeakReference<>(
                            fiberIoAdoptsThePollersAPlainThreadStarted(server).schedulerForTests());
                    plainVirtualThreadsDoSocketIo(server, 1);
                    awaitCollected(closed);
                }
                case "unwatched-fiber-then-plain" -> {
                    // No stall watch (threshold 0): nothing could rescue a poller's queued run, so
                    // the pollers are handed to the default scheduler at their start.
                    FiberIo closed =
                            fiberIoDoesSocketIo(server, 1, FiberIo.builder().stallThreshold(Duration.ZERO));
                    check(closed.hostedPollers() == 0, "an unwatched FiberIo hosted " + closed.hostedPollers());
                    plainVirtualThreadsDoSocketIo(server, 1);
                }
                case "cycles-fiber-first" -> {
                    for (int cycle = 0; cycle < 10; cycle++) {
                        fiberIoDoesSocketIo(server, 4, FiberIo.builder());
                        plainVirtualThreadsDoSocketIo(server, 4);
                    }
                }
                case "cycles-plain-first" -> {
                    for (int cycle = 0; cycle < 10; cycle++) {
                        plainVirtualThreadsDoSocketIo(server, 4);
                        fiberIoDoesSocketIo(server, 4, FiberIo.builder());
                    }
                }
                case "plain-under-cpu-load" -> plainSocketIoWhileEveryWorkerComputes(server);
                case "plain-first-under-cpu-load" -> {
                    plainVirtualThreadsDoSocketIo(server, 1); // the pollers are adopted, not started, by the FiberIo
                    plainSocketIoWhileEveryWorkerComputes(server);
                }
                default -> throw new IllegalArgumentException("no scenario " + args[0]);
            }
        } catch (Throwable failure) {
            failure.printStackTrace(System.out);
            System.exit(1);
        }
        System.out.println("scenario held: " + args[0]);
        System.exit(0);
    }

    /**
     * A FiberIo built by {@code builder} whose tasks each make REQUESTS round trips, then closes
     * (which must not fail); returns it, closed.
     */
    private static FiberIo fiberIoDoesSocketIo(EchoServer server, int connections, FiberIo.Builder builder) {
        try (FiberIo io = builder.workers(2).build()) {
            check(fibersDoSocketIo(io, server, connections), "fibers echoed");
            return io;
        }
    }

    /**
     * Plain virtual threads start the pollers (on the default scheduler); then a FiberIo's fibers
     * do socket I/O, which has the FiberIo adopt them. Returns that FiberIo, closed.
     */
    private static FiberIo fiberIoAdoptsThePollersAPlainThreadStarted(EchoServer server) throws Exception {
        plainVirtualThreadsDoSocketIo(server, 1);
        FiberIo adopter = fiberIoDoesSocketIo(server, 2, FiberIo.builder());
        check(adopter.hostedPollers() > 0, "the FiberIo adopted the pollers a plain thread started");
        return adopter;
    }

    /** Whether {@code connections} tasks on {@code io}, each making REQUESTS round trips, echoed them all. */
    private static boolean fibersDoSocketIo(FiberIo io, EchoServer server, int connections) {
        int sum = io.call(() -> {
            List<Future<Integer>> clients = new ArrayList<>();
            for (int i = 0; i < connections; i++) {
                clients.add(Io.async(() -> server.roundTrips(REQUESTS)));
            }
            int total = 0;
            for (Future<Integer> client : clients) {
                total += client.await();
            }
            return total;
        });
        return sum == connections * EchoServer.expectedSum(REQUESTS);
    }

    /** Plain virtual threads (JDK default scheduler) each make REQUESTS round trips. */
    private static void plainVirtualThreadsDoSocketIo(EchoServer server, int connections) throws Exception {
        List<CompletableFuture<Integer>> clients = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            CompletableFuture<Integer> client = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    client.complete(server.roundTrips(REQUESTS));
                } catch (Throwable e) {
                    client.completeExceptionally(e);
                }
            });
            clients.add(client);
        }
        for (CompletableFuture<Integer> client : clients) {
            int sum = client.get(WAIT_SECONDS, TimeUnit.SECONDS); // a TimeoutException is the stranded-poller failure
            check(sum == EchoServer.expectedSum(REQUESTS), "a plain virtual thread echoed " + sum);
        }
    }

    /**
     * A fiber of a new FiberIo does socket I/O (its fiber starts the pollers, or readies through
     * them and so has them adopted); then every worker of that FiberIo runs a task that computes
     * without a suspend point, and a plain virtual thread's socket I/O must still make progress.
     */
    private static void plainSocketIoWhileEveryWorkerComputes(EchoServer server) throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            // Enough round trips that one of the fiber's reads parks (a sub-poller readies it)
            check(
                    io.call(() -> server.roundTrips(REQUESTS)) == EchoServer.expectedSum(REQUESTS),
                    "the fiber's round trips");
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger computing = new AtomicInteger();
            List<Future<Long>> hogs = io.call(() -> {
                List<Future<Long>> tasks = new ArrayList<>();
                for (int i = 0; i < io.workers(); i++) {
                    tasks.add(Io.async(() -> {
                        computing.incrementAndGet();
                        long spins = 0;
                        while (!stop.get()) {
                            spins++;
                        }
                        return spins;
                    }));
                }
                return tasks;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (computing.get() < io.workers()) {
                check(System.nanoTime() < deadline, "the computing tasks did not all start");
                Thread.onSpinWait();
            }
            try {
                plainVirtualThreadsDoSocketIo(server, 2);
            } finally {
                stop.set(true);
            }
            for (Future<Long> hog : hogs) {
                check(hog.await() > 0, "a computing task");
            }
            // The pollers run on this FiberIo (started or adopted by its fiber), and their runs
            // queued behind the computing tasks reached the plain threads only through the stall
            // watch's rescue.
            check(io.hostedPollers() > 0, "the FiberIo hosted the pollers");
            check(io.pollerRescues() > 0, "no poller run was rescued from the busy workers");
        }
    }

    private static void awaitCollected(WeakReference<Object> reference) {
        await().atMost(Duration.ofSeconds(WAIT_SECONDS)).until(() -> {
            System.gc();
            return reference.get() == null;
        });
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError("failed: " + what);
        }
    }
}
