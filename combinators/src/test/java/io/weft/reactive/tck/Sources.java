package io.weft.reactive.tck;

import io.weft.Future;
import io.weft.Io;
import io.weft.channel.Channel;
import io.weft.channel.ChannelClosed;
import io.weft.reactive.Producer;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.reactivestreams.tck.flow.support.TestException;

/**
 * The Io under test for one verification class, and the futures, channels and producers its
 * publishers are made from: stream {@code n} is the longs {@code 0..n-1}. Publishers capture
 * {@link Io#current()} when they are made, so they are made through {@link #made}.
 */
final class Sources implements AutoCloseable {
    /** Channels of at most this many items are filled and closed before the publisher is made. */
    private static final long FILLED_UP_FRONT = 1_024;

    /** The capacity of a channel that a filler thread keeps topped up (the TCK asks for up to 2^31-1 items). */
    private static final int FILLER_CAPACITY = 16;

    /** Completes foreign stages a little later, on a JDK thread. */
    private static final java.util.concurrent.Executor LATER =
            CompletableFuture.delayedExecutor(5, java.util.concurrent.TimeUnit.MILLISECONDS);

    private final TckIo kind;
    private final Io io;
    /** Channels that filler threads send to; closed by {@link #close} so no filler stays blocked. */
    private final List<Channel<Long>> fed = new CopyOnWriteArrayList<>();

    Sources(TckIo kind) {
        this.kind = kind;
        this.io = kind.open();
    }

    /** Calls {@code factory} with the Io under test installed. */
    <P> P made(Callable<P> factory) {
        return Io.with(io).call(factory);
    }

    /** Calls {@code factory} with an Io of the same kind installed and closes it after, or returns null if it has none. */
    <P> P madeOnClosedIo(Callable<P> factory) {
        return kind.madeThenClosed(factory);
    }

    /** A producer that emits {@code 0..n-1}. */
    static Producer<Long> counting(long n) {
        return emitter -> {
            for (long i = 0; i < n; i++) {
                emitter.emit(i);
            }
        };
    }

    /** A producer that fails before emitting anything. */
    static Producer<Long> failing() {
        return emitter -> {
            throw new TestException();
        };
    }

    /**
     * A task's future on the Io under test, with the value 0 if {@code n} is 1, or null if it is
     * 0. On FiberIo it completes on a worker, racing the subscription; on BlockingIo it is done
     * before the publisher is made.
     */
    Future<Long> outcome(long n) {
        if (n > 1) {
            throw new IllegalArgumentException("a future holds at most one item, asked for " + n);
        }
        return made(() -> Io.async(() -> n == 0 ? null : 0L));
    }

    /**
     * A future made from a foreign {@link java.util.concurrent.CompletionStage} (a
     * CompletableFuture) that completes a few milliseconds later on a JDK thread, with the value
     * 0 if {@code n} is 1, or null if it is 0: pending when the TCK subscribes, on any Io.
     */
    static Future<Long> stageOutcome(long n) {
        if (n > 1) {
            throw new IllegalArgumentException("a future holds at most one item, asked for " + n);
        }
        return Future.from(CompletableFuture.supplyAsync(() -> n == 0 ? null : 0L, LATER));
    }

    /** A foreign stage that fails a few milliseconds later on a JDK thread. */
    static Future<Long> failedStageOutcome() {
        return Future.from(CompletableFuture.supplyAsync(
                () -> {
                    throw new TestException();
                },
                LATER));
    }

    /**
     * A task's future on the Io under test (a scheduling one) that sleeps a few milliseconds
     * before it completes, so it is pending when the TCK subscribes; fails if {@code fail}.
     */
    Future<Long> pendingOutcome(long n, boolean fail) {
        if (n > 1) {
            throw new IllegalArgumentException("a future holds at most one item, asked for " + n);
        }
        return made(() -> Io.async(() -> {
            Io.sleep(java.time.Duration.ofMillis(5));
            if (fail) {
                throw new TestException();
            }
            return n == 0 ? null : 0L;
        }));
    }

    /** A task's future on the Io under test that fails. */
    Future<Long> failedOutcome() {
        return made(() -> Io.async(() -> {
            throw new TestException();
        }));
    }

    /**
     * A channel that yields {@code 0..n-1} and is then closed. Short streams are buffered whole;
     * longer ones are sent by a virtual thread (with the Io under test installed) into a small
     * channel, so receiving them exercises the senders' wake-ups too.
     */
    Channel<Long> channelOf(long n) {
        if (n <= FILLED_UP_FRONT) {
            Channel<Long> channel = Channel.bounded((int) Math.max(1, n));
            for (long i = 0; i < n; i++) {
                if (!channel.trySend(i)) {
                    throw new IllegalStateException("a channel of capacity " + n + " refused item " + i);
                }
            }
            channel.close();
            return channel;
        }
        Channel<Long> channel = Channel.bounded(FILLER_CAPACITY);
        fed.add(channel);
        Thread.ofVirtual()
                .name("tck-channel-filler")
                .start(() -> Io.with(io).run(() -> {
                    try {
                        for (long i = 0; i < n; i++) {
                            channel.send(i);
                        }
                        channel.close();
                    } catch (ChannelClosed stopped) {
                        // closed by close(): the test that wanted these items is over
                    }
                }));
        return channel;
    }

    /** Closes the filled channels (ending their fillers), then the Io, which cancels its leftover tasks. */
    @Override
    public void close() {
        for (Channel<Long> channel : fed) {
            channel.close();
        }
        if (io instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + io + " failed", e);
            }
        }
    }
}
