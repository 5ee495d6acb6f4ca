package io.weft.benchmarks;

import io.weft.Io;
import io.weft.channel.Channel;
import io.weft.reactive.Inbox;
import io.weft.reactive.Reactive;
import io.weft.reactive.WeftPublisher;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.function.IntUnaryOperator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import reactor.core.publisher.Flux;

/**
 * Publisher throughput: 100,000 items through a three-operator pipeline, {@code map(x + 1)},
 * {@code filter(x % 3 != 0)}, {@code map(x * 2)}, with an asynchronous, backpressured hop (a
 * buffer of 256) before each operator and one more before the consumer that sums what arrives:
 * four hops. Every peer runs the same shape on 2 worker threads:
 * <ul>
 *   <li>{@code fiber}: each operator is a Weft producer task ({@link Reactive#produce}) that
 *       receives from its upstream through an {@link Inbox} (prefetch 256) and emits the result;
 *       the consumer is the root task's inbox. Four fibers on FiberIo, backpressure by suspension.
 *   <li>{@code reactor}: {@code Flux.range} on a worker of its own ({@code subscribeOn}) with {@code publishOn(parallel(2), 256)} before each
 *       operator and before the {@code reduce} that sums.
 *   <li>{@code jdk}: a {@link SubmissionPublisher} source and three {@code SubmissionPublisher}
 *       processors (buffer 256 each, asking upstream only for what they have room for) on a
 *       2-thread ForkJoinPool, summed by a {@link Flow.Subscriber}.
 *   <li>{@code kotlin}: a kotlinx {@code Flow} ({@code asFlow}) with {@code buffer(256)} before each
 *       operator and before the {@code fold} (a producer coroutine and a channel: Flow's
 *       asynchronous, backpressured hop), on {@code Dispatchers.Default}.
 * </ul>
 * Items per second = 100,000 / the score.
 *
 * <p>{@link #channelPipeline} is the same for every peer but {@code fiber}, whose hops there are
 * channels: a task receives from its upstream's Inbox and sends to a {@link Channel} of 256, and
 * the next hop subscribes to {@link Reactive#fromChannel} of it (the source is a task sending to a
 * channel). The other peers' hops are already channels or queues, so they run their one shape.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PublisherThroughput extends PeerBenchmark {
    static final int ITEMS = 100_000;
    static final int BUFFER = 256;
    private static final IntUnaryOperator PLUS_ONE = x -> x + 1;
    private static final IntPredicate NOT_THIRD = x -> x % 3 != 0;
    private static final IntUnaryOperator TWICE = x -> x * 2;
    private static final long EXPECTED = expected();

    @Param({"fiber", "reactor", "jdk", "kotlin"})
    public String peer;

    private Peers peers;

    @Setup
    public void setUp() {
        peers = Peers.start(peer.equals("jdk") ? "fjp" : peer);
    }

    @TearDown
    public void tearDown() {
        peers.close();
    }

    @Benchmark
    public long channelPipeline() throws InterruptedException {
        return peer.equals("fiber") ? Peers.check(weftChannels(), EXPECTED) : pipeline();
    }

    @Benchmark
    public long pipeline() throws InterruptedException {
        long sum = switch (peer) {
            case "fiber" -> weft();
            case "reactor" -> reactor();
            case "jdk" -> submissionPublishers();
            case "kotlin" -> peers.kotlin.pipeline();
            default -> throw new IllegalStateException(peer);
        };
        return Peers.check(sum, EXPECTED);
    }

    private long weft() {
        return peers.weftCall(() -> {
            WeftPublisher<Integer> source = Reactive.produce(emitter -> {
                for (int i = 0; i < ITEMS; i++) {
                    emitter.emit(i);
                }
            });
            WeftPublisher<Integer> out = stage(stage(stage(source, PLUS_ONE, null), null, NOT_THIRD), TWICE, null);
            long sum = 0;
            try (Inbox<Integer> inbox = Reactive.subscribe(out, BUFFER)) {
                for (int x : inbox) {
                    sum += x;
                }
            }
            return sum;
        });
    }

    private long weftChannels() {
        return peers.weftCall(() -> {
            Channel<Integer> first = Channel.bounded(BUFFER);
            Io.async(() -> {
                try {
                    for (int i = 0; i < ITEMS; i++) {
                        first.send(i);
                    }
                } finally {
                    first.close();
                }
                return null;
            });
            WeftPublisher<Integer> source = Reactive.fromChannel(first);
            WeftPublisher<Integer> out =
                    channelStage(channelStage(channelStage(source, PLUS_ONE, null), null, NOT_THIRD), TWICE, null);
            long sum = 0;
            try (Inbox<Integer> inbox = Reactive.subscribe(out, BUFFER)) {
                for (int x : inbox) {
                    sum += x;
                }
            }
            return sum;
        });
    }

    /** One operator as a task between channels: receive from upstream, map or filter, send; published by fromChannel. */
    private static WeftPublisher<Integer> channelStage(
            WeftPublisher<Integer> upstream, IntUnaryOperator map, IntPredicate filter) {
        Channel<Integer> out = Channel.bounded(BUFFER);
        Io.async(() -> {
            try (Inbox<Integer> inbox = Reactive.subscribe(upstream, BUFFER)) {
                for (int x : inbox) {
                    if (map != null) {
                        out.send(map.applyAsInt(x));
                    } else if (filter.test(x)) {
                        out.send(x);
                    }
                }
            } finally {
                out.close();
            }
            return null;
        });
        return Reactive.fromChannel(out);
    }

    /** One operator as a producer task: receive from upstream, map or filter, emit. */
    private static WeftPublisher<Integer> stage(
            WeftPublisher<Integer> upstream, IntUnaryOperator map, IntPredicate filter) {
        return Reactive.produce(emitter -> {
            try (Inbox<Integer> inbox = Reactive.subscribe(upstream, BUFFER)) {
                for (int x : inbox) {
                    if (map != null) {
                        emitter.emit(map.applyAsInt(x));
                    } else if (filter.test(x)) {
                        emitter.emit(x);
                    }
                }
            }
        });
    }

    private long reactor() {
        Long sum = Flux.range(0, ITEMS)
                .subscribeOn(peers.reactor) // a producer of its own: fused into publishOn, range is no hop
                .publishOn(peers.reactor, BUFFER)
                .map(PLUS_ONE::applyAsInt)
                .publishOn(peers.reactor, BUFFER)
                .filter(NOT_THIRD::test)
                .publishOn(peers.reactor, BUFFER)
                .map(TWICE::applyAsInt)
                .publishOn(peers.reactor, BUFFER) // a fourth hop, to the summing, as Weft's pipeline has
                .reduce(0L, (acc, x) -> acc + x)
                .block();
        return sum == null ? -1 : sum;
    }

    private long submissionPublishers() throws InterruptedException {
        Summer summer;
        try (SubmissionPublisher<Integer> source = new SubmissionPublisher<>(peers.fjp, BUFFER)) {
            Hop plusOne = new Hop(peers.fjp, PLUS_ONE, x -> true);
            Hop notThird = new Hop(peers.fjp, x -> x, NOT_THIRD);
            Hop twice = new Hop(peers.fjp, TWICE, x -> true);
            summer = new Summer(twice);
            source.subscribe(plusOne);
            plusOne.subscribe(notThird);
            notThird.upstreamHop = plusOne;
            notThird.subscribe(twice);
            twice.upstreamHop = notThird;
            twice.subscribe(summer);
            for (int i = 0; i < ITEMS; i++) {
                source.submit(i); // the benchmark thread blocks while the first buffer is full
            }
        }
        summer.done.await();
        return summer.sum;
    }

    /**
     * One asynchronous hop with a map-or-filter: a SubmissionPublisher (buffer 256, its own
     * consumer task per subscriber) that asks upstream only for what its buffer has room for.
     * It never blocks a pool thread: a processor that calls the blocking {@code submit} inside
     * {@code onNext} deadlocks on a 2-thread ForkJoinPool here (the blocked submitter helps run
     * the consumer task it waits for, nested inside its own frame).
     */
    private static final class Hop extends SubmissionPublisher<Integer> implements Flow.Processor<Integer, Integer> {
        private final IntUnaryOperator map;
        private final IntPredicate keep;
        private Flow.Subscription upstream;
        /** The hop before this one, told when this one has consumed an item (its buffer drained). */
        volatile Hop upstreamHop;

        private long outstanding; // requested from upstream, not yet received; guarded by this

        Hop(java.util.concurrent.Executor executor, IntUnaryOperator map, IntPredicate keep) {
            super(executor, BUFFER);
            this.map = map;
            this.keep = keep;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            synchronized (this) {
                upstream = s;
            }
            refill();
        }

        @Override
        public void onNext(Integer item) {
            int x = map.applyAsInt(item);
            if (keep.test(x) && offer(x, (subscriber, dropped) -> false) < 0) {
                throw new IllegalStateException("buffer overflow: requested more than there was room for");
            }
            synchronized (this) {
                outstanding--;
            }
            refill();
            Hop before = upstreamHop;
            if (before != null) {
                before.refill(); // this hop consumed one of the previous hop's items
            }
        }

        /** Requests from upstream what the buffer has room for, counting what is already on its way. */
        synchronized void refill() {
            long room = BUFFER - Math.max(0, estimateMaximumLag()) - outstanding;
            if (upstream != null && room > 0) {
                outstanding += room;
                upstream.request(room);
            }
        }

        @Override
        public void onError(Throwable failure) {
            closeExceptionally(failure);
        }

        @Override
        public void onComplete() {
            close();
        }
    }

    /** The consumer: sums, tells the last hop it consumed, then counts down at the end. */
    private static final class Summer implements Flow.Subscriber<Integer> {
        final CountDownLatch done = new CountDownLatch(1);
        private final Hop last;
        long sum;
        private Flow.Subscription subscription;

        Summer(Hop last) {
            this.last = last;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(BUFFER);
        }

        @Override
        public void onNext(Integer item) {
            sum += item;
            subscription.request(1);
            last.refill();
        }

        @Override
        public void onError(Throwable failure) {
            sum = -1;
            done.countDown();
        }

        @Override
        public void onComplete() {
            done.countDown();
        }
    }

    private static long expected() {
        long sum = 0;
        for (int i = 0; i < ITEMS; i++) {
            int x = PLUS_ONE.applyAsInt(i);
            if (NOT_THIRD.test(x)) {
                sum += TWICE.applyAsInt(x);
            }
        }
        return sum;
    }
}
