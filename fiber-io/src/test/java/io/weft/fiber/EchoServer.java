package io.weft.fiber;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * A loopback echo server on platform threads (one per connection), so its own I/O never goes
 * through the JDK's virtual-thread pollers; and the blocking client the tests run on fibers and
 * virtual threads.
 */
final class EchoServer implements AutoCloseable {
    private final ServerSocket server;

    EchoServer() throws IOException {
        server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("echo-acceptor").start(this::accept);
    }

    private void accept() {
        try {
            while (true) {
                Socket socket = server.accept();
                Thread.ofPlatform().daemon().name("echo-connection").start(() -> echo(socket));
            }
        } catch (IOException closed) {
            // the server socket was closed: stop accepting
        }
    }

    private static void echo(Socket socket) {
        try (socket;
                InputStream in = socket.getInputStream();
                OutputStream out = socket.getOutputStream()) {
            int b;
            while ((b = in.read()) >= 0) {
                out.write(b);
                out.flush();
            }
        } catch (IOException peerGone) {
            // the client closed its end
        }
    }

    int port() {
        return server.getLocalPort();
    }

    /** Opens a connection and sends {@code count} one-byte requests, each awaiting its echo; returns the sum echoed. */
    int roundTrips(int count) {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port())) {
            socket.setTcpNoDelay(true);
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            int sum = 0;
            for (int i = 0; i < count; i++) {
                out.write(i & 0x7F);
                out.flush();
                int echoed = in.read();
                if (echoed != (i & 0x7F)) {
                    throw new IllegalStateException("request " + i + " echoed as " + echoed);
                }
                sum += echoed;
            }
            return sum;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The sum {@link #roundTrips(int)} returns for {@code count} requests. */
    static int expectedSum(int count) {
        int sum = 0;
        for (int i = 0; i < count; i++) {
            sum += i & 0x7F;
        }
        return sum;
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
