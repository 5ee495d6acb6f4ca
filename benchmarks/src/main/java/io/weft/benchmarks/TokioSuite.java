package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Tokio's runtime benchmarks (tokio/benches/rt_multi_threaded.rs), one JMH benchmark each, every
 * peer in the same run. One operation is the whole workload (for example 10,000 spawns), so the
 * score is microseconds per workload: lower is better. {@code spawn_many_remote_busy} lives in
 * {@link SpawnManyRemoteBusy} because it keeps spinning tasks alive for the whole trial.
 *
 * <p>"Local" means spawned from inside a task of the runtime; "remote" means from the benchmark
 * thread, outside any task. Unless a workload says otherwise, its tasks are started from the
 * benchmark thread, which then waits for them (as Tokio's {@code block_on} does).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class TokioSuite extends PeerBenchmark {
    static final int SPAWNS = 10_000;
    static final int YIELD_TASKS = 200;
    static final int YIELDS = 1_000;
    static final int PING_PONG_ROUNDS = 1_000;
    static final int CHAIN_DEPTH = 1_000;

    /** A task's whole body; shared, so spawning allocates no lambda. */
    static final Callable<Integer> ONE = () -> 1;

    /** The runtime under test: fiber, vthread, fjp, tpe, kotlin, or the floor (see {@link Peers}). */
    @Param({"fiber", "vthread", "fjp", "tpe", "kotlin", "floor"})
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

    // ---------------------------------------------------------------- spawn_many_local

    /**
     * 10,000 tasks spawned from inside one task, which then awaits them all. FJP forks and joins
     * (in reverse, its idiom: a join helps); the thread pool's root blocks one of its two workers
     * in {@code Future.get}, which is what a thread pool offers.
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the number of tasks that ran
     */
    @Benchmark
    public long spawnManyLocal(CoreState cores) {
        long sum = switch (peer) {
            case "fiber" -> peers.fiber.call(TokioSuite::spawnAllAndSum); // inside a root task: local spawns
            case "vthread", "floor" ->
                Peers.get(peers.startThread(() -> {
                    List<FutureTask<Integer>> tasks = new ArrayList<>(SPAWNS);
                    for (int i = 0; i < SPAWNS; i++) {
                        tasks.add(peers.startThread(ONE));
                    }
                    long total = 0;
                    for (FutureTask<Integer> task : tasks) {
                        total += Peers.get(task);
                    }
                    return total;
                }));
            case "kotlin" -> peers.kotlin.spawnManyLocal();
            case "fjp" ->
                peers.fjp
                        .submit(() -> {
                            List<ForkJoinTask<Integer>> tasks = new ArrayList<>(SPAWNS);
                            for (int i = 0; i < SPAWNS; i++) {
                                tasks.add(ForkJoinTask.adapt(ONE).fork());
                            }
                            long total = 0;
                            for (int i = SPAWNS - 1; i >= 0; i--) {
                                total += tasks.get(i).join();
                            }
                            return total;
                        })
                        .join();
            case "tpe" ->
                Peers.get(peers.tpe.submit(() -> {
                    List<java.util.concurrent.Future<Integer>> tasks = new ArrayList<>(SPAWNS);
                    for (int i = 0; i < SPAWNS; i++) {
                        tasks.add(peers.tpe.submit(ONE));
                    }
                    long total = 0;
                    for (java.util.concurrent.Future<Integer> task : tasks) {
                        total += Peers.get(task);
                    }
                    return total;
                }));
            default -> throw new IllegalStateException(peer);
        };
        return Peers.check(sum, SPAWNS);
    }

    // ---------------------------------------------------------------- spawn_many_remote_idle

    /**
     * 10,000 tasks spawned from the benchmark thread (outside any task), which then waits for them
     * all; the workers are idle in between.
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the number of tasks that ran
     */
    @Benchmark
    public long spawnManyRemoteIdle(CoreState cores) {
        return Peers.check(spawnManyRemote(peers), SPAWNS);
    }

    /** Weft's side of spawn_many: spawns {@link #SPAWNS} tasks with the installed Io, sums them. */
    static long spawnAllAndSum() {
        List<Future<Integer>> tasks = new ArrayList<>(SPAWNS);
        for (int i = 0; i < SPAWNS; i++) {
            tasks.add(Io.async(ONE));
        }
        long total = 0;
        for (Future<Integer> task : tasks) {
            total += task.await();
        }
        return total;
    }

    /** Spawns {@link #SPAWNS} tasks from the calling (non-runtime) thread and sums their values. */
    static long spawnManyRemote(Peers peers) {
        return switch (peers.peer) {
            case "fiber" -> { // from this plain thread: remote spawns, through the injector (Io.with would run a root
                // task)
                List<Future<Integer>> tasks = new ArrayList<>(SPAWNS);
                for (int i = 0; i < SPAWNS; i++) {
                    tasks.add(peers.fiber.spawn(ONE));
                }
                long total = 0;
                for (Future<Integer> task : tasks) {
                    total += task.await();
                }
                yield total;
            }
            case "vthread", "floor" -> {
                List<FutureTask<Integer>> tasks = new ArrayList<>(SPAWNS);
                for (int i = 0; i < SPAWNS; i++) {
                    tasks.add(peers.startThread(ONE));
                }
                long total = 0;
                for (FutureTask<Integer> task : tasks) {
                    total += Peers.get(task);
                }
                yield total;
            }
            case "kotlin" -> peers.kotlin.spawnManyRemote();
            case "fjp" -> {
                List<ForkJoinTask<Integer>> tasks = new ArrayList<>(SPAWNS);
                for (int i = 0; i < SPAWNS; i++) {
                    tasks.add(peers.fjp.submit(ONE));
                }
                long total = 0;
                for (ForkJoinTask<Integer> task : tasks) {
                    total += task.join();
                }
                yield total;
            }
            case "tpe" -> {
                List<java.util.concurrent.Future<Integer>> tasks = new ArrayList<>(SPAWNS);
                for (int i = 0; i < SPAWNS; i++) {
                    tasks.add(peers.tpe.submit(ONE));
                }
                long total = 0;
                for (java.util.concurrent.Future<Integer> task : tasks) {
                    total += Peers.get(task);
                }
                yield total;
            }
            default -> throw new IllegalStateException(peers.peer);
        };
    }

    // ---------------------------------------------------------------- yield_many

    /**
     * 200 tasks that each yield 1,000 times, every peer starting them from the benchmark thread
     * and waiting for them there (kotlinx: {@code scope.async}). Fibers and virtual threads call
     * {@code Thread.yield()}; FJP and the thread pool "yield" by resubmitting the task to the back
     * of a shared queue (FJP: {@code externalSubmit}, since a fork would go to the worker's LIFO
     * end and run again at once).
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the number of yields done
     */
    @Benchmark
    public long yieldMany(CoreState cores) {
        long sum = 0;
        switch (peer) {
            case "fiber" -> {
                List<Future<Integer>> tasks = new ArrayList<>(YIELD_TASKS);
                for (int i = 0; i < YIELD_TASKS; i++) {
                    tasks.add(peers.fiber.spawn(TokioSuite::yieldRepeatedly));
                }
                for (Future<Integer> task : tasks) {
                    sum += task.await();
                }
            }
            case "vthread", "floor" -> {
                List<FutureTask<Integer>> tasks = new ArrayList<>(YIELD_TASKS);
                for (int i = 0; i < YIELD_TASKS; i++) {
                    tasks.add(peers.startThread(TokioSuite::yieldRepeatedly));
                }
                for (FutureTask<Integer> task : tasks) {
                    sum += Peers.get(task);
                }
            }
            case "kotlin" -> sum = peers.kotlin.yieldMany();
            case "fjp", "tpe" -> {
                List<CompletableFuture<Integer>> tasks = new ArrayList<>(YIELD_TASKS);
                for (int i = 0; i < YIELD_TASKS; i++) {
                    Resubmitter task = new Resubmitter(peers, YIELDS);
                    tasks.add(task.done);
                    task.submit();
                }
                for (CompletableFuture<Integer> task : tasks) {
                    sum += task.join();
                }
            }
            default -> throw new IllegalStateException(peer);
        }
        return Peers.check(sum, (long) YIELD_TASKS * YIELDS);
    }

    private static int yieldRepeatedly() {
        int yields = 0;
        for (int i = 0; i < YIELDS; i++) {
            Thread.yield();
            yields++;
        }
        return yields;
    }

    /** A task that "yields" by resubmitting itself to the back of its executor's queue. */
    static final class Resubmitter implements Runnable {
        private final Peers peers;
        private final CompletableFuture<Integer> done = new CompletableFuture<>();
        private int left;
        private int yields;

        Resubmitter(Peers peers, int yields) {
            this.peers = peers;
            this.left = yields;
        }

        void submit() {
            if (peers.fjp != null) {
                peers.fjp.externalSubmit(ForkJoinTask.adapt(this)); // the back of a shared queue
            } else {
                peers.tpe.execute(this);
            }
        }

        @Override
        public void run() {
            if (left == 0) {
                done.complete(yields);
                return;
            }
            left--;
            yields++;
            submit();
        }
    }

    // ---------------------------------------------------------------- ping_pong

    /**
     * Two tasks pass a turn back and forth 1,000 times (1,000 round trips), each parking until its
     * turn comes; every peer starts both from the benchmark thread and waits for them there. Fibers hand off with Weft's own primitive, a {@link ParkToken} readied through
     * {@link Io#ready} and parked on with {@link Io#suspendRaw}; virtual threads with {@code
     * LockSupport.park/unpark}; FJP and the thread pool run the same two parking players as two
     * submitted tasks, each holding one of the two workers (a parked pool task parks its worker:
     * that is what a thread pool offers). A chain of submitted steps instead would be no handoff
     * at all on FJP: a step submitted from a worker runs next on that same worker.
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the number of round trips
     */
    @Benchmark
    public long pingPong(CoreState cores) {
        long rounds = switch (peer) {
            case "fiber" -> {
                TokenTurns turns = new TokenTurns();
                Future<Integer> ping = peers.fiber.spawn(() -> turns.play(0));
                Future<Integer> pong = peers.fiber.spawn(() -> turns.play(1));
                yield (ping.await() + (long) pong.await()) / 2;
            }
            case "vthread", "floor" -> {
                ThreadTurns turns = new ThreadTurns();
                Thread ping = peers.unstartedThread(() -> turns.play(0));
                Thread pong = peers.unstartedThread(() -> turns.play(1));
                turns.players[0] = ping;
                turns.players[1] = pong;
                pong.start();
                ping.start();
                Peers.join(ping);
                Peers.join(pong);
                yield (turns.played[0] + (long) turns.played[1]) / 2;
            }
            case "kotlin" -> peers.kotlin.pingPong();
            case "fjp", "tpe" -> {
                PoolTurns turns = new PoolTurns();
                java.util.concurrent.Future<?> ping = peers.pool().submit(() -> turns.join(0));
                java.util.concurrent.Future<?> pong = peers.pool().submit(() -> turns.join(1));
                Peers.get(ping);
                Peers.get(pong);
                yield (turns.played[0] + (long) turns.played[1]) / 2;
            }
            default -> throw new IllegalStateException(peer);
        };
        return Peers.check(rounds, PING_PONG_ROUNDS);
    }

    /** Two Weft tasks taking turns; a waiter publishes a fresh token, then re-checks the turn. */
    static final class TokenTurns {
        /** Whose turn it is (0 or 1). Written by the player whose turn ends, read by both. */
        private volatile int turn;
        /** Each player's token while it waits for its turn; taken by the other player to ready it. */
        private final AtomicReferenceArray<ParkToken> waiting = new AtomicReferenceArray<>(2);

        int play(int me) {
            Io io = Io.current();
            int played = 0;
            for (int round = 0; round < PING_PONG_ROUNDS; round++) {
                // The waiter writes its token, then reads the turn; the passer writes the turn,
                // then takes the token: both volatile, so no lost wake-up.
                while (turn != me) {
                    ParkToken park = ParkToken.create();
                    waiting.set(me, park);
                    if (turn == me) {
                        break;
                    }
                    io.suspendRaw(park);
                }
                played++;
                turn = 1 - me;
                ParkToken other = waiting.getAndSet(1 - me, null);
                if (other != null) {
                    io.ready(other);
                }
            }
            return played;
        }
    }

    /** Two threads taking turns with {@code LockSupport}; also the platform-thread floor's loop. */
    static class ThreadTurns {
        /** Whose turn it is (0 or 1). Written by the player whose turn ends, read by both. */
        volatile int turn;

        final Thread[] players = new Thread[2];
        final int[] played = new int[2];

        void play(int me) {
            for (int round = 0; round < PING_PONG_ROUNDS; round++) {
                takeTurn(me);
            }
        }

        /** Waits for this player's turn, then passes it to the other player. */
        void takeTurn(int me) {
            while (turn != me) {
                LockSupport.park(this);
            }
            played[me]++;
            turn = 1 - me;
            LockSupport.unpark(players[1 - me]);
        }
    }

    /**
     * The two players as pool tasks: each names its own thread, waits until the other has too (the
     * latch publishes both names), then plays {@link ThreadTurns}' loop on its worker.
     */
    static final class PoolTurns extends ThreadTurns {
        private final CountDownLatch seated = new CountDownLatch(2);

        Void join(int me) throws InterruptedException {
            players[me] = Thread.currentThread();
            seated.countDown();
            seated.await();
            play(me);
            return null;
        }
    }

    // ---------------------------------------------------------------- chained_spawn

    /**
     * A chain of 1,000 tasks: each spawns the next and ends without waiting for it; the last
     * completes a {@link CompletableFuture} that the benchmark thread joins. Every peer starts the
     * chain's first task from the benchmark thread without waiting for it (FiberIo: {@code
     * spawn}, not {@code Io.with(io).run}, which would also wait for a root task to end: one more
     * wake-up of the benchmark thread than the other peers pay).
     *
     * @param cores the cores' state, read before each iteration ({@link CoreState})
     * @return the chain's length
     */
    @Benchmark
    public long chainedSpawn(CoreState cores) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        switch (peer) {
            case "fiber" -> peers.fiber.spawn(() -> fiberLink(CHAIN_DEPTH, done));
            case "vthread", "floor" -> virtualChain(peers, CHAIN_DEPTH, done);
            case "kotlin" -> peers.kotlin.chainedSpawn(CHAIN_DEPTH, done);
            case "fjp", "tpe" -> executorChain(peers.executor(), CHAIN_DEPTH, done);
            default -> throw new IllegalStateException(peer);
        }
        return Peers.check(done.join(), CHAIN_DEPTH);
    }

    /** One task of the chain: spawns the next, or completes {@code done} with CHAIN_DEPTH if it is the last. */
    static Void fiberLink(int left, CompletableFuture<Integer> done) {
        if (left == 1) {
            done.complete(CHAIN_DEPTH);
        } else {
            Io.async(() -> fiberLink(left - 1, done));
        }
        return null;
    }

    private static void virtualChain(Peers peers, int left, CompletableFuture<Integer> done) {
        peers.unstartedThread(() -> {
                    if (left == 1) {
                        done.complete(CHAIN_DEPTH);
                    } else {
                        virtualChain(peers, left - 1, done);
                    }
                })
                .start();
    }

    /** Starts a chain of {@code left} executor tasks; the last completes {@code done} with CHAIN_DEPTH. */
    static void executorChain(Executor executor, int left, CompletableFuture<Integer> done) {
        executor.execute(() -> {
            if (left == 1) {
                done.complete(CHAIN_DEPTH);
            } else {
                executorChain(executor, left - 1, done);
            }
        });
    }
}
