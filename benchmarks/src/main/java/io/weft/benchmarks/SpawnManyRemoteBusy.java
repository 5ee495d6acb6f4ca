package io.weft.benchmarks;

import io.weft.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Tokio's {@code spawn_many_remote_busy}: 10,000 tasks spawned from the benchmark thread while
 * both workers are kept busy. Microseconds per 10,000 spawns; lower is better.
 *
 * <p>Design: for the whole trial (warm-up included), two <em>spinner</em> tasks run on the peer,
 * one per worker: each spins for {@link #SLICE_NANOS} on the CPU, then yields, until the trial
 * ends. A spinner that never yielded would starve everything on a two-worker runtime, so, like
 * Tokio's busy tasks ({@code yield_now} in a loop), they yield: fibers with {@code Thread.yield()};
 * the thread pool by {@code execute} of itself (the back of its FIFO queue); kotlinx coroutines
 * with {@code yield()}; FJP, whose own
 * cooperative yield is to help, by running in place as many submissions as were pending when it
 * yields ({@code getQueuedSubmissionCount}, then {@code pollSubmission}): a yield lets what is
 * queued ahead run, as the thread pool's FIFO resubmission does (two spinners may count the same
 * pending tasks, so together they can run up to twice as many). The workload then measures how quickly a runtime gets remote work running between
 * slices of busy tasks: its fairness and how often it looks at its shared (injector) queue.
 *
 * <p>Not in the default peers: {@code vthread}. With yield-looping virtual threads on both
 * carriers, the JDK's default scheduler never ran the remote spawns (one operation did not finish
 * in 100 s; JDK 25): a yield with an empty local queue re-submits the virtual thread to an
 * external queue, and a ForkJoinPool worker keeps draining the queue its last task came from.
 * FJP with the spinners re-submitting themselves ({@code externalSubmit} or {@code execute})
 * starves the same way. {@code -p peer=vthread} reproduces it (it hangs).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class SpawnManyRemoteBusy extends PeerBenchmark {
    /** How long a spinner computes between two yields. */
    static final long SLICE_NANOS = 5_000;

    static final int SPINNERS = Peers.WORKERS;

    /** The runtime under test: fiber, fjp, tpe or kotlin (vthread starves here: see the class comment). */
    @Param({"fiber", "fjp", "tpe", "kotlin"})
    public String peer;

    private Peers peers;
    private volatile boolean spinning;
    /** How many FJP spinners have started: they help only once each holds its own worker. */
    private final AtomicInteger fjpSpinnersRunning = new AtomicInteger();

    private final List<Future<Long>> fiberSpinners = new ArrayList<>();
    private final List<Thread> virtualSpinners = new ArrayList<>();
    private final List<kotlinx.coroutines.Job> kotlinSpinners = new ArrayList<>();

    /** Starts the peer's runtime and its two spinners. */
    @Setup(Level.Trial)
    public void start() {
        peers = Peers.start(peer);
        spinning = true;
        for (int i = 0; i < SPINNERS; i++) {
            switch (peer) {
                case "fiber" -> fiberSpinners.add(peers.fiber.spawn(this::spinUntilStopped));
                case "vthread" -> virtualSpinners.add(Thread.startVirtualThread(this::spinUntilStopped));
                case "fjp" -> peers.fjp.execute(new FjpSpinner(this));
                case "tpe" -> peers.tpe.execute(new TpeSpinner());
                case "kotlin" ->
                    kotlinSpinners.add(peers.kotlin.startSpinner(() -> spinning, SpawnManyRemoteBusy::spin));
                default -> throw new IllegalStateException(peer);
            }
        }
    }

    /** Stops the spinners, then the runtime. */
    @TearDown(Level.Trial)
    public void stop() {
        spinning = false;
        for (Future<Long> spinner : fiberSpinners) {
            spinner.await();
        }
        virtualSpinners.forEach(Peers::join);
        kotlinSpinners.forEach(KotlinPeer::join);
        if (peer.equals("fjp")) {
            // The spinners return once they see spinning == false: wait for the pool to be idle.
            peers.fjp.awaitQuiescence(10, TimeUnit.SECONDS);
        }
        peers.close();
    }

    /**
     * 10,000 tasks spawned from the benchmark thread while two spinners keep the workers busy.
     *
     * @return the number of tasks that ran
     */
    @Benchmark
    public long spawnManyRemoteBusy() {
        return Peers.check(TokioSuite.spawnManyRemote(peers), TokioSuite.SPAWNS);
    }

    private long spinUntilStopped() {
        long slices = 0;
        while (spinning) {
            spin();
            Thread.yield();
            slices++;
        }
        return slices;
    }

    private static void spin() {
        long end = System.nanoTime() + SLICE_NANOS;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    /**
     * A busy task on FJP: spins a slice, then yields the FJP way, by running in place the
     * submissions pending when it yields (those that arrive meanwhile wait for its next yield,
     * as behind the thread pool's FIFO resubmission). It helps only once both spinners run, so that
     * neither runs the other. (Helping one submission per slice would cap FJP at one task per
     * 5 µs slice per spinner, a floor of 25 ms that FJP itself does not have.)
     */
    private static final class FjpSpinner extends RecursiveAction {
        private static final long serialVersionUID = 1L;
        private final transient SpawnManyRemoteBusy bench;

        FjpSpinner(SpawnManyRemoteBusy bench) {
            this.bench = bench;
        }

        @Override
        protected void compute() {
            bench.fjpSpinnersRunning.incrementAndGet();
            while (bench.spinning) {
                spin();
                if (bench.fjpSpinnersRunning.get() == SPINNERS) {
                    // the submissions pending now, not those that arrive while it helps
                    for (int pending = getPool().getQueuedSubmissionCount(); pending > 0; pending--) {
                        ForkJoinTask<?> other = pollSubmission();
                        if (other == null) {
                            break;
                        }
                        other.invoke();
                    }
                }
            }
        }
    }

    /** A busy task on the thread pool: spins a slice, then yields by resubmitting itself. */
    private final class TpeSpinner implements Runnable {
        @Override
        public void run() {
            spin();
            if (!spinning) {
                return;
            }
            try {
                peers.tpe.execute(this);
            } catch (RejectedExecutionException e) {
                if (spinning) {
                    throw e;
                }
                // the trial ended between our check and the submit: the pool is shutting down
            }
        }
    }
}
