package io.weft.benchmarks;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Floors measured in the same run as the workloads: what the hardware and the JDK cost at the
 * bottom, so the workloads' numbers can be read against them. Nanoseconds per single operation
 * (one round trip, one CAS, one yield); no peers.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class Floors extends PeerBenchmark {
    static final int YIELDS = 1_000;

    private final AtomicLong counter = new AtomicLong();

    /** The partner of the platform-thread ping-pong; player 0 is the benchmark thread. */
    private final TokioSuite.ThreadTurns turns = new TokioSuite.ThreadTurns();

    private volatile boolean running;
    private Thread partner;

    /** A virtual-thread builder whose scheduler is {@link #runQueue}, drained by the benchmark thread. */
    private Thread.Builder.OfVirtual trivialScheduler;

    private final ArrayDeque<Runnable> runQueue = new ArrayDeque<>();

    /** Starts the ping-pong partner and makes the trivial virtual-thread scheduler. */
    @Setup(Level.Trial)
    public void start() {
        running = true;
        turns.players[0] = Thread.currentThread();
        partner = Thread.ofPlatform().daemon().name("floor-partner").start(() -> {
            while (running) {
                turns.takeTurn(1);
            }
        });
        turns.players[1] = partner;
        trivialScheduler = FloorCarriers.virtualThreadBuilder(runQueue::add);
    }

    /** Stops the partner thread. */
    @TearDown(Level.Trial)
    public void stop() {
        running = false;
        // The partner waits for its turn: give it one so that it sees running == false.
        turns.turn = 1;
        LockSupport.unpark(partner);
        Peers.join(partner);
    }

    /**
     * One round trip between two platform threads: pass the turn with {@code unpark}, wait for it
     * with {@code park}. The same loop as the vthread ping-pong, on platform threads.
     *
     * @return the round trips played by the benchmark thread so far
     */
    @Benchmark
    public int parkUnparkPingPong() {
        // The benchmark thread must be player 0 (JMH may run setup on another thread).
        turns.players[0] = Thread.currentThread();
        turns.takeTurn(0);
        return turns.played[0];
    }

    /**
     * One uncontended {@code AtomicLong} compare-and-set.
     *
     * @return the new value
     */
    @Benchmark
    public long atomicLongCas() {
        long value = counter.get();
        if (!counter.compareAndSet(value, value + 1)) {
            throw new IllegalStateException("an uncontended CAS failed");
        }
        return value + 1;
    }

    /**
     * One {@code Thread.yield()} of a virtual thread whose scheduler is a trivial run loop on the
     * benchmark thread (an {@code ArrayDeque}); the floor under any virtual-thread scheduler,
     * FiberIo's included. 1,000 yields per invocation, start and end of the thread included.
     *
     * @return the number of yields done
     */
    @Benchmark
    @OperationsPerInvocation(YIELDS)
    public long virtualThreadYieldOnTrivialScheduler() {
        int[] yields = {0};
        trivialScheduler
                .unstarted(() -> {
                    for (int i = 0; i < YIELDS; i++) {
                        Thread.yield();
                        yields[0]++;
                    }
                })
                .start();
        Runnable next;
        while ((next = runQueue.poll()) != null) {
            next.run();
        }
        return Peers.check(yields[0], YIELDS);
    }
}
