package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Futures workloads: a chain of awaits, races with loser cancellation, and fan-out/fan-in, each
 * written the way a user of the peer would write it. Microseconds per workload; lower is better.
 *
 * <p>Weft (fiber, blocking) and virtual threads run the workload inside one root task that the
 * benchmark thread waits for, since their idiom is direct-style code in a task; CompletableFuture
 * (on the fjp or tpe executor) and Reactor compose it from the benchmark thread and wait once at
 * the end, since their idiom is composition. {@code blocking} (BlockingIo: inline, on a virtual
 * clock) is a floor of Weft's own future machinery with no scheduling, not a competitor.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class Futures extends PeerBenchmark {
    static final int CHAIN_LENGTH = 100;
    static final int RACES = 100;
    static final int FAN_OUT = 1_000;
    /** How long a race's loser would take: it is always cancelled long before. */
    static final Duration LOSER_DELAY = Duration.ofHours(1);

    /** The runtime under test. */
    @Param({"fiber", "vthread", "fjp", "tpe", "reactor", "kotlin", "floor", "blocking"})
    public String peer;

    private Peers peers;
    /** For vthread and floor races: {@code invokeAny} on a thread-per-task executor is the JDK's race. */
    private ExecutorService virtualThreads;

    /** Starts the peer's runtime. */
    @Setup(Level.Trial)
    public void start() {
        peers = Peers.start(peer);
        virtualThreads = peers.floor != null
                ? Executors.newThreadPerTaskExecutor(peers.floor.factory())
                : Executors.newVirtualThreadPerTaskExecutor();
    }

    /** Stops the peer's runtime. */
    @TearDown(Level.Trial)
    public void stop() {
        virtualThreads.close();
        peers.close();
    }

    // ---------------------------------------------------------------- chain of awaits

    /**
     * 100 tasks, each awaiting the previous one's value and adding one. Weft and virtual threads
     * spawn them all and each blocks in {@code await}/{@code get}; CompletableFuture chains
     * {@code thenApplyAsync}; Reactor hops with {@code publishOn} before each {@code map}.
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the last task's value (99)
     */
    @Benchmark
    public long awaitChain(CoreState cores) {
        int last = switch (peer) {
            case "fiber", "blocking" ->
                peers.weftCall(() -> {
                    Future<Integer> previous = Io.async(() -> 0);
                    for (int i = 1; i < CHAIN_LENGTH; i++) {
                        Future<Integer> before = previous;
                        previous = Io.async(() -> before.await() + 1);
                    }
                    return previous.await();
                });
            case "vthread", "floor" ->
                Peers.get(peers.startThread(() -> {
                    FutureTask<Integer> previous = peers.startThread(() -> 0);
                    for (int i = 1; i < CHAIN_LENGTH; i++) {
                        FutureTask<Integer> before = previous;
                        previous = peers.startThread(() -> Peers.get(before) + 1);
                    }
                    return Peers.get(previous);
                }));
            case "kotlin" -> peers.kotlin.awaitChain();
            case "fjp", "tpe" -> {
                Executor executor = peers.executor();
                CompletableFuture<Integer> previous = CompletableFuture.supplyAsync(() -> 0, executor);
                for (int i = 1; i < CHAIN_LENGTH; i++) {
                    previous = previous.thenApplyAsync(value -> value + 1, executor);
                }
                yield previous.join();
            }
            case "reactor" -> {
                Mono<Integer> previous = Mono.fromCallable(() -> 0).subscribeOn(peers.reactor);
                for (int i = 1; i < CHAIN_LENGTH; i++) {
                    previous = previous.publishOn(peers.reactor).map(value -> value + 1);
                }
                yield previous.block();
            }
            default -> throw new IllegalStateException(peer);
        };
        return Peers.check(last, CHAIN_LENGTH - 1);
    }

    // ---------------------------------------------------------------- race

    /**
     * 100 races one after the other, each between a task that returns its index at once and a
     * task that would take an hour; the winner's value is summed and the loser cancelled.
     * <ul>
     *   <li>Weft: {@code Io.race(winner, loser)}, the loser a task in {@code Io.sleep(1 h)}: it is
     *       cancelled at its sleep and unwinds (race does not wait for it);
     *   <li>virtual threads: {@code invokeAny} on a virtual-thread-per-task executor, the loser in
     *       {@code Thread.sleep(1 h)}, cancelled by interrupt;
     *   <li>CompletableFuture (on FJP or the thread pool): {@code anyOf(supplyAsync(winner),
     *       loser)}, the loser completed by a pool task in {@code Thread.sleep(1 h)}; once the
     *       winner is in, that task is cancelled with {@code cancel(true)} (interrupted, or never
     *       started); the races chained with {@code thenCompose} from the benchmark thread, which
     *       waits once at the end (each race after the first is started where the previous
     *       winner completed, on a pool worker);
     *   <li>Reactor: {@code Mono.firstWithValue(winner.subscribeOn, loser.subscribeOn)} in a
     *       {@code concatMap}, the loser a {@code Mono.delay(1 h)} subscribed on a worker (a task
     *       that arms a timer), cancelled when the winner arrives.
     * </ul>
     * BlockingIo (virtual clock): the loser's sleep ends at once on the virtual clock, both are
     * done and the first argument wins; a floor of the race machinery.
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the sum of the winners' values (0 + 1 + ... + 99)
     */
    @Benchmark
    public long race(CoreState cores) {
        long sum = switch (peer) {
            case "fiber", "blocking" ->
                peers.weftCall(() -> {
                    long total = 0;
                    for (int i = 0; i < RACES; i++) {
                        int index = i;
                        Future<Integer> winner = Io.async(() -> index);
                        Future<Integer> loser = Io.async(Futures::sleepingLoser);
                        total += Io.race(winner, loser);
                    }
                    return total;
                });
            case "vthread", "floor" ->
                Peers.get(peers.startThread(() -> {
                    long total = 0;
                    for (int i = 0; i < RACES; i++) {
                        int index = i;
                        total += invokeAny(virtualThreads, () -> index);
                    }
                    return total;
                }));
            case "fjp", "tpe" -> {
                ExecutorService pool = peers.pool();
                CompletableFuture<Long> total = CompletableFuture.completedFuture(0L);
                for (int i = 0; i < RACES; i++) {
                    int index = i;
                    total = total.thenCompose(sofar -> {
                        CompletableFuture<Integer> loser = new CompletableFuture<>();
                        Callable<Boolean> sleeper = () -> loser.complete(sleepingThreadLoser());
                        // Each pool runs the winner first, as FiberIo runs spawns in order: a
                        // ForkJoinPool worker pops its own newest submission first, so from a
                        // worker (every race after the first) the loser is submitted first; the
                        // thread pool's queue and FJP's external submissions are FIFO.
                        boolean loserFirst = peers.fjp != null && ForkJoinTask.inForkJoinPool();
                        java.util.concurrent.Future<?> sleeping = loserFirst ? submitLoser(peers, sleeper) : null;
                        CompletableFuture<Integer> winner = CompletableFuture.supplyAsync(() -> index, pool);
                        java.util.concurrent.Future<?> toCancel = loserFirst ? sleeping : submitLoser(peers, sleeper);
                        return CompletableFuture.anyOf(winner, loser).thenApply(first -> {
                            toCancel.cancel(true); // interrupts the loser's sleep, or it never starts
                            return sofar + (Integer) first;
                        });
                    });
                }
                yield total.join();
            }
            case "reactor" ->
                Flux.range(0, RACES)
                        .concatMap(index -> Mono.firstWithValue(
                                Mono.fromCallable(() -> index).subscribeOn(peers.reactor),
                                Mono.delay(LOSER_DELAY, peers.reactor)
                                        .map(tick -> -1)
                                        .subscribeOn(peers.reactor)))
                        .reduce(0L, (total, value) -> total + value)
                        .block();
            case "kotlin" -> peers.kotlin.race();
            default -> throw new IllegalStateException(peer);
        };
        return Peers.check(sum, (long) RACES * (RACES - 1) / 2);
    }

    private static Integer sleepingLoser() {
        Io.sleep(LOSER_DELAY);
        return -1;
    }

    /**
     * The JDK's race on {@code executor} (a thread per task): {@code invokeAny} of {@code winner}
     * and a task that sleeps an hour unless interrupted, which invokeAny does to the loser once the
     * winner is in.
     */
    private static int invokeAny(ExecutorService executor, Callable<Integer> winner) {
        Callable<Integer> loser = Futures::sleepingThreadLoser;
        try {
            return executor.invokeAny(List.of(winner, loser));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    /**
     * Submits a race's loser to the pool peer so that {@code cancel(true)} interrupts it while it
     * runs: the thread pool's FutureTask does; on FJP see {@link #submitInterruptible}.
     */
    private static java.util.concurrent.Future<?> submitLoser(Peers peers, Callable<Boolean> sleeper) {
        return peers.fjp != null ? submitInterruptible(peers.fjp, sleeper) : peers.tpe.submit(sleeper);
    }

    /**
     * Submits {@code task} to {@code pool} so that {@code cancel(true)} interrupts it while it
     * runs. {@code ForkJoinPool.submit} gives such a task only when called from outside the pool;
     * from one of its workers (where a race after the first is composed) it gives one whose
     * cancel never interrupts, and a loser asleep for an hour would hold its worker.
     */
    private static <T> ForkJoinTask<T> submitInterruptible(ForkJoinPool pool, Callable<T> task) {
        ForkJoinTask<T> interruptible = ForkJoinTask.adaptInterruptible(task);
        pool.execute(interruptible);
        return interruptible;
    }

    /** A race's loser on a thread: sleeps an hour unless interrupted first. */
    private static Integer sleepingThreadLoser() throws InterruptedException {
        Thread.sleep(LOSER_DELAY);
        return -1;
    }

    // ---------------------------------------------------------------- fan-out / fan-in

    /**
     * 1,000 tasks started at once, each returning its index, then all their values summed. Weft
     * and virtual threads await each future in turn; CompletableFuture joins {@code allOf};
     * Reactor uses {@code flatMap} (concurrency 1,000) over {@code subscribeOn} monos.
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the sum of the values (0 + 1 + ... + 999)
     */
    @Benchmark
    public long fanOutFanIn(CoreState cores) {
        long sum = switch (peer) {
            case "fiber", "blocking" ->
                peers.weftCall(() -> {
                    List<Future<Integer>> parts = new ArrayList<>(FAN_OUT);
                    for (int i = 0; i < FAN_OUT; i++) {
                        int index = i;
                        parts.add(Io.async(() -> index));
                    }
                    long total = 0;
                    for (Future<Integer> part : parts) {
                        total += part.await();
                    }
                    return total;
                });
            case "vthread", "floor" ->
                Peers.get(peers.startThread(() -> {
                    List<FutureTask<Integer>> parts = new ArrayList<>(FAN_OUT);
                    for (int i = 0; i < FAN_OUT; i++) {
                        int index = i;
                        parts.add(peers.startThread(() -> index));
                    }
                    long total = 0;
                    for (FutureTask<Integer> part : parts) {
                        total += Peers.get(part);
                    }
                    return total;
                }));
            case "fjp", "tpe" -> {
                Executor executor = peers.executor();
                List<CompletableFuture<Integer>> parts = new ArrayList<>(FAN_OUT);
                for (int i = 0; i < FAN_OUT; i++) {
                    int index = i;
                    parts.add(CompletableFuture.supplyAsync(() -> index, executor));
                }
                yield CompletableFuture.allOf(parts.toArray(CompletableFuture<?>[]::new))
                        .thenApply(all -> {
                            long total = 0;
                            for (CompletableFuture<Integer> part : parts) {
                                total += part.join();
                            }
                            return total;
                        })
                        .join();
            }
            case "reactor" ->
                Flux.range(0, FAN_OUT)
                        .flatMap(index -> Mono.fromCallable(() -> index).subscribeOn(peers.reactor), FAN_OUT)
                        .reduce(0L, (total, value) -> total + value)
                        .block();
            case "kotlin" -> peers.kotlin.fanOutFanIn();
            default -> throw new IllegalStateException(peer);
        };
        return Peers.check(sum, (long) FAN_OUT * (FAN_OUT - 1) / 2);
    }
}
