package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Channel MPMC: 10,000 items from P producers to C consumers through a bounded queue of capacity
 * 1, 16 or 1024, for P×C of 1×1 and 2×2. {@code fiber}: Weft's {@link Channel} between fibers on
 * FiberIo (close after the producers, consumers iterate). {@code vthread}: an
 * {@link ArrayBlockingQueue} between JDK virtual threads (one poison pill per consumer).
 * {@code kotlin}: a kotlinx {@code Channel(capacity)} between coroutines on {@code Dispatchers.Default}
 * (close after the producers, consumers iterate). One
 * benchmark method per shape and capacity, so each is its own workload in the report.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ChannelMpmc extends PeerBenchmark {
    static final int ITEMS = 10_000;
    private static final Integer POISON = -1;

    @Param({"fiber", "vthread", "kotlin"})
    public String peer;

    private Peers peers;

    @Setup
    public void setUp() {
        peers = Peers.start(peer);
    }

    @TearDown
    public void tearDown() {
        peers.close();
    }

    @Benchmark
    public long mpmc1x1Capacity1() throws InterruptedException {
        return run(1, 1, 1);
    }

    @Benchmark
    public long mpmc1x1Capacity16() throws InterruptedException {
        return run(1, 1, 16);
    }

    @Benchmark
    public long mpmc1x1Capacity1024() throws InterruptedException {
        return run(1, 1, 1024);
    }

    @Benchmark
    public long mpmc2x2Capacity1() throws InterruptedException {
        return run(2, 2, 1);
    }

    @Benchmark
    public long mpmc2x2Capacity16() throws InterruptedException {
        return run(2, 2, 16);
    }

    @Benchmark
    public long mpmc2x2Capacity1024() throws InterruptedException {
        return run(2, 2, 1024);
    }

    private long run(int producers, int consumers, int capacity) throws InterruptedException {
        long sum = switch (peer) {
            case "fiber" -> weft(producers, consumers, capacity);
            case "kotlin" -> peers.kotlin.channel(producers, consumers, capacity);
            default -> blockingQueue(producers, consumers, capacity);
        };
        long expected = (long) ITEMS * (ITEMS - 1) / 2;
        if (sum != expected) {
            throw new IllegalStateException("lost or duplicated items: sum " + sum + " != " + expected);
        }
        return sum;
    }

    private long weft(int producers, int consumers, int capacity) {
        return peers.weft.call(() -> {
            Channel<Integer> channel = Channel.bounded(capacity);
            List<Future<Object>> sending = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                int first = p;
                sending.add(Io.async(() -> {
                    for (int i = first; i < ITEMS; i += producers) {
                        channel.send(i);
                    }
                    return null;
                }));
            }
            List<Future<Long>> receiving = new ArrayList<>();
            for (int c = 0; c < consumers; c++) {
                receiving.add(Io.async(() -> {
                    long sum = 0;
                    for (int item : channel) {
                        sum += item;
                    }
                    return sum;
                }));
            }
            for (Future<Object> f : sending) {
                f.await();
            }
            channel.close();
            long total = 0;
            for (Future<Long> f : receiving) {
                total += f.await();
            }
            return total;
        });
    }

    private static long blockingQueue(int producers, int consumers, int capacity) throws InterruptedException {
        ArrayBlockingQueue<Integer> queue = new ArrayBlockingQueue<>(capacity);
        AtomicLong total = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
            threads.add(Thread.ofVirtual().start(() -> {
                long sum = 0;
                try {
                    for (Integer item = queue.take(); !item.equals(POISON); item = queue.take()) {
                        sum += item;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                total.addAndGet(sum);
            }));
        }
        List<Thread> sending = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int first = p;
            sending.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int i = first; i < ITEMS; i += producers) {
                        queue.put(i);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        for (Thread t : sending) {
            t.join();
        }
        for (int c = 0; c < consumers; c++) {
            queue.put(POISON);
        }
        for (Thread t : threads) {
            t.join();
        }
        return total.get();
    }
}
