package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RecursiveTask;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Recursive fork/join, ForkJoinPool's home ground: fib({@value #N}) computed by forking one half
 * and computing the other in place, down to the leaves ({@value #TASKS} tasks forked, as many
 * awaited), each written in its peer's idiom: Weft {@code Io.async} and {@code await} inside a
 * root task (fiber; blocking runs the same code on BlockingIo, inline); virtual threads started
 * per fork and joined with {@code get} (vthread; floor runs them on the floor's carriers); a
 * {@code RecursiveTask} that {@code fork}s and {@code join}s (fjp); kotlinx {@code async} and
 * {@code await} in a {@code coroutineScope} (kotlin). Microseconds per workload; lower is better.
 * Not one of issue 11's targets (a report): it shows what deep stacks of tasks run in place cost
 * (join helping on FiberIo, inline children on BlockingIo), and how a fork/join idiom compares
 * with the pool built for it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ForkJoinRecursion extends PeerBenchmark {
    /** The fib argument. */
    static final int N = 20;
    /** How many tasks one workload forks: one per inner node of fib's call tree, fib(N + 1) - 1. */
    static final int TASKS = 10_945;
    /** fib(N). */
    static final int FIB_N = 6_765;

    /** The runtime under test. */
    @Param({"fiber", "vthread", "fjp", "kotlin", "floor", "blocking"})
    public String peer;

    private Peers peers;

    /** Starts the peer's runtime. */
    @Setup(Level.Trial)
    public void start() {
        peers = Peers.start(peer);
    }

    /** Stops the peer's runtime. */
    @TearDown(Level.Trial)
    public void stop() {
        peers.close();
    }

    /**
     * fib({@value #N}) by recursive fork/join.
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return fib({@value #N})
     */
    @Benchmark
    public long fib(CoreState cores) {
        int value = switch (peer) {
            case "fiber", "blocking" -> peers.weftCall(() -> weftFib(N));
            case "vthread", "floor" -> Peers.get(peers.startThread(() -> threadFib(peers, N)));
            case "fjp" -> peers.fjp.invoke(new Fib(N));
            case "kotlin" -> peers.kotlin.fib(N);
            default -> throw new IllegalStateException(peer);
        };
        return Peers.check(value, FIB_N);
    }

    static int weftFib(int n) {
        if (n < 2) {
            return n;
        }
        Future<Integer> first = Io.async(() -> weftFib(n - 1));
        int second = weftFib(n - 2);
        return first.await() + second;
    }

    private static int threadFib(Peers peers, int n) {
        if (n < 2) {
            return n;
        }
        FutureTask<Integer> first = peers.startThread(() -> threadFib(peers, n - 1));
        int second = threadFib(peers, n - 2);
        return Peers.get(first) + second;
    }

    /** ForkJoinPool's idiom: fork one half, compute the other, join. */
    static final class Fib extends RecursiveTask<Integer> {
        private static final long serialVersionUID = 1L;
        private final int n;

        Fib(int n) {
            this.n = n;
        }

        @Override
        protected Integer compute() {
            if (n < 2) {
                return n;
            }
            Fib first = new Fib(n - 1);
            first.fork();
            return new Fib(n - 2).compute() + first.join();
        }
    }
}
