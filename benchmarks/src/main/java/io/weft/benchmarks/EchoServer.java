package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A blocking-socket echo server and its clients, one task per connection on each side, all on the
 * runtime under test: {@value #CONNECTIONS} loopback connections, each making {@value #REQUESTS}
 * requests of {@value #MESSAGE_BYTES} bytes and awaiting each echo ({@code InputStream} /
 * {@code OutputStream}, TCP_NODELAY). The score is requests per second (one invocation is the
 * whole run: accept, {@value #CONNECTIONS} × {@value #REQUESTS} round trips, close); higher is better.
 *
 * <ul>
 *   <li>{@code fiber}: an acceptor task, one handler task per accepted connection and one client
 *       task per connection, all {@code Io.async} on FiberIo (2 workers): socket reads unmount the
 *       fiber;
 *   <li>{@code fiber-pollers-plain} (not in the default set: pass it with {@code -p}): {@code
 *       fiber}, in a JVM where a plain virtual thread blocked on a socket first, so the JDK's
 *       socket pollers start on the default scheduler and the FiberIo adopts them when they
 *       first wake one of its fibers;
 *   <li>{@code vthread}: the same on JDK virtual threads, default scheduler (parallelism 2);
 *   <li>{@code threads}: the same on platform threads from a cached pool (thread per connection:
 *       what blocking I/O on platform threads needs; a 2-thread pool would deadlock).
 * </ul>
 * JMH runs each peer in its own JVM forks, so the JDK's socket pollers are each JVM's own.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class EchoServer extends PeerBenchmark {
    static final int CONNECTIONS = 64;
    static final int REQUESTS = 2_000;
    static final int MESSAGE_BYTES = 32;

    /** The runtime both ends run on: fiber, vthread or threads. */
    @Param({"fiber", "vthread", "threads"})
    public String peer;

    private Peers peers;
    private ExecutorService threads;
    private ServerSocket server;

    /** Starts the peer's runtime and the listening socket. */
    @Setup(Level.Trial)
    public void start() throws IOException {
        if (peer.equals("threads")) {
            threads = Executors.newCachedThreadPool();
        } else if (peer.equals("fiber-pollers-plain")) {
            startPollersOnPlainVirtualThread();
            peers = Peers.start("fiber");
        } else {
            peers = Peers.start(peer);
        }
        server = new ServerSocket(0, CONNECTIONS * 2, InetAddress.getLoopbackAddress());
    }

    /** Closes the listening socket and stops the runtime. */
    @TearDown(Level.Trial)
    public void stop() throws IOException {
        server.close();
        if (threads != null) {
            threads.shutdownNow();
        } else {
            peers.close();
        }
    }

    /**
     * One run: every connection's requests echoed.
     *
     * @return the number of bytes echoed back to the clients (checked)
     */
    @Benchmark
    @OperationsPerInvocation(CONNECTIONS * REQUESTS)
    public long echo() {
        long expected = (long) CONNECTIONS * REQUESTS * MESSAGE_BYTES;
        long echoed = switch (peer) {
            case "fiber", "fiber-pollers-plain" -> peers.weftCall(this::echoOnFibers);
            case "vthread" -> echoOn(Peers::startVirtual);
            case "threads" ->
                echoOn(body -> {
                    FutureTask<Long> task = new FutureTask<>(body);
                    threads.execute(task);
                    return task;
                });
            default -> throw new IllegalArgumentException(peer);
        };
        return Peers.check(echoed, expected);
    }

    /**
     * Starts the JDK's socket pollers from a plain virtual thread: it blocks in a socket read
     * until it has parked (the poller is then running), then gets its byte.
     */
    private static void startPollersOnPlainVirtualThread() throws IOException {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Socket writer = new Socket(listener.getInetAddress(), listener.getLocalPort());
                Socket reader = listener.accept()) {
            FutureTask<Integer> read =
                    new FutureTask<>(() -> reader.getInputStream().read());
            Thread thread = Thread.startVirtualThread(read);
            while (true) {
                Thread.State state = thread.getState();
                if (state == Thread.State.WAITING) {
                    break;
                }
                if (state == Thread.State.TERMINATED) {
                    throw new IllegalStateException("the plain virtual thread's read ended before it parked");
                }
                Thread.onSpinWait();
            }
            writer.getOutputStream().write(1);
            if (Peers.get(read) != 1) {
                throw new IllegalStateException("the plain virtual thread read the wrong byte");
            }
        }
    }

    private long echoOnFibers() {
        Future<Long> acceptor = Io.async(() -> {
            List<Future<Long>> handlers = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket socket = server.accept();
                handlers.add(Io.async(() -> serve(socket)));
            }
            long served = 0;
            for (Future<Long> handler : handlers) {
                served += handler.await();
            }
            return served;
        });
        List<Future<Long>> clients = new ArrayList<>();
        for (int i = 0; i < CONNECTIONS; i++) {
            clients.add(Io.async(this::client));
        }
        long echoed = 0;
        for (Future<Long> client : clients) {
            echoed += client.await();
        }
        Peers.check(acceptor.await(), echoed);
        return echoed;
    }

    /** Starts a body on the peer's threads; the JDK analogue of {@code Io.async}. */
    private interface Starter {
        java.util.concurrent.Future<Long> start(Callable<Long> body);
    }

    private long echoOn(Starter starter) {
        java.util.concurrent.Future<Long> acceptor = starter.start(() -> {
            List<java.util.concurrent.Future<Long>> handlers = new ArrayList<>();
            for (int i = 0; i < CONNECTIONS; i++) {
                Socket socket = server.accept();
                handlers.add(starter.start(() -> serve(socket)));
            }
            long served = 0;
            for (java.util.concurrent.Future<Long> handler : handlers) {
                served += handler.get();
            }
            return served;
        });
        List<java.util.concurrent.Future<Long>> clients = new ArrayList<>();
        for (int i = 0; i < CONNECTIONS; i++) {
            clients.add(starter.start(this::client));
        }
        long echoed = 0;
        for (java.util.concurrent.Future<Long> client : clients) {
            echoed += Peers.get(client);
        }
        Peers.check(Peers.get(acceptor), echoed);
        return echoed;
    }

    /** The server side of one connection: echoes every message until the client closes; returns the bytes echoed. */
    private static long serve(Socket socket) throws IOException {
        try (socket) {
            socket.setTcpNoDelay(true);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] message = new byte[MESSAGE_BYTES];
            long echoed = 0;
            while (in.readNBytes(message, 0, MESSAGE_BYTES) == MESSAGE_BYTES) {
                out.write(message);
                out.flush();
                echoed += MESSAGE_BYTES;
            }
            return echoed;
        }
    }

    /** The client side of one connection: {@link #REQUESTS} round trips; returns the bytes echoed back. */
    private long client() {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            socket.setTcpNoDelay(true);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            byte[] request = new byte[MESSAGE_BYTES];
            byte[] reply = new byte[MESSAGE_BYTES];
            long echoed = 0;
            for (int i = 0; i < REQUESTS; i++) {
                request[0] = (byte) i;
                out.write(request);
                out.flush();
                if (in.readNBytes(reply, 0, MESSAGE_BYTES) != MESSAGE_BYTES || reply[0] != request[0]) {
                    throw new IllegalStateException("request " + i + " was not echoed");
                }
                echoed += MESSAGE_BYTES;
            }
            return echoed;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
