package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.fiber.FiberIo;
import java.util.ArrayList;
import java.util.List;

/**
 * A probe of a FiberIo whose program fills the heap, outside JMH and the tests: with a small heap
 * ({@code -Xmx64m}), a root task on 2 workers spawns tasks that each allocate 64 KB, awaiting them
 * every 1,000. In mode {@code task} each task keeps its array in a static list; in mode {@code
 * root} the root task keeps one array per awaited task. Either way the heap fills and the call
 * fails with OutOfMemoryError; main then drops what was kept and calls again (three calls in all), closes
 * the FiberIo and prints {@code END}. A run that does not end (the caller of
 * {@code stress/run-oom-probe.sh} gives each 40 s) is a FiberIo that hung when the heap filled:
 * read it with {@code jhsdb jstack --pid} (jcmd cannot attach to a JVM with a full heap).
 *
 * <pre>
 * java -Xmx64m --add-opens java.base/java.lang=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar \
 *     io.weft.benchmarks.OutOfMemoryProbe [task|root]
 * </pre>
 *
 * What each fix of ARCHITECTURE.md's "Out of memory" changed in the share of runs that end is
 * written there.
 */
public final class OutOfMemoryProbe {
    private static final int ROUNDS = 3;
    private static final int BATCH = 1_000;
    private static final int CHUNK_BYTES = 64 * 1024;
    /** What the tasks keep, in mode {@code task}; main drops it after each round. */
    private static final List<byte[]> KEPT = new ArrayList<>();

    private OutOfMemoryProbe() {}

    /**
     * Runs the probe.
     *
     * @param args the mode: {@code task} (the default) or {@code root}
     */
    public static void main(String[] args) {
        boolean rootKeeps = args.length > 0 && args[0].equals("root");
        // A handler that prints would fail for want of memory anyway; what is reported is not the point here
        Thread.setDefaultUncaughtExceptionHandler((thread, failure) -> {});
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            for (int round = 0; round < ROUNDS; round++) {
                try {
                    Io.with(io).call(() -> fill(rootKeeps));
                    System.out.println("round " + round + " ended without filling the heap");
                } catch (OutOfMemoryError expected) {
                    drop();
                    System.out.println(
                            "round " + round + " ended: " + expected.getClass().getSimpleName());
                }
            }
        } catch (Throwable unexpected) {
            drop();
            System.out.println("failed:");
            unexpected.printStackTrace(System.out);
            return;
        }
        System.out.println("END");
    }

    private static Integer fill(boolean rootKeeps) {
        List<byte[]> mine = new ArrayList<>();
        while (true) {
            List<Future<Integer>> batch = new ArrayList<>(BATCH);
            for (int i = 0; i < BATCH; i++) {
                batch.add(Io.async(() -> {
                    byte[] chunk = new byte[CHUNK_BYTES];
                    if (!rootKeeps) {
                        synchronized (KEPT) {
                            KEPT.add(chunk);
                        }
                    }
                    return chunk.length;
                }));
            }
            for (Future<Integer> f : batch) {
                f.await();
                if (rootKeeps) {
                    mine.add(new byte[CHUNK_BYTES]);
                }
            }
        }
    }

    private static void drop() {
        synchronized (KEPT) {
            KEPT.clear();
        }
    }
}
