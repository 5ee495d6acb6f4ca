package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.fiber.FiberIo;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.locks.LockSupport;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * A probe of what a parked task's stack holds, outside JMH: parks many tasks at once, cycle after
 * cycle, and reads the stack chunk of every parked thread (the frames between the thread's start
 * and its park, copied to the heap when it unmounted): the bytes its frames use, as a histogram.
 * On the last cycle it also prints a class histogram of what the parked tasks hold, per task.
 * Memory.parked measures the same total with JMH; this probe says where the bytes are, in one JVM
 * run. The JIT's inlining decisions move the stack by hundreds of bytes from one JVM run to the
 * next, so compare medians over many runs, not single runs.
 *
 * <pre>
 * java --add-opens java.base/java.lang=ALL-UNNAMED \
 *     --add-opens java.base/jdk.internal.vm=ALL-UNNAMED \
 *     -cp benchmarks/target/benchmarks.jar io.weft.benchmarks.StackChunkProbe \
 *     [tasks] [cycles] [fiber|vthread|both]
 * </pre>
 *
 * {@code fiber}: {@code Io.async} tasks on a two-worker FiberIo, each parked in
 * {@code Io.suspendRaw} on its own ParkToken (Memory's fiber peer); {@code vthread}: JDK virtual
 * threads, each running a FutureTask parked in {@code LockSupport.park} (Memory's vthread peer).
 */
public final class StackChunkProbe {
    /*
     * Implementation notes.
     *
     * Reading a chunk: VirtualThread.cont is the thread's Continuation, Continuation.tail its
     * newest StackChunk; a chunk's frames occupy the words from `sp` to `bottom` (StackChunk's
     * own fields, in words), and `parent` links older chunks (a task parked once has one). JDK 25
     * internals, hence the second --add-opens. The threads are parked (WAITING) when read: their
     * chunks do not change under the reader.
     *
     * The class histogram is the JVM's own (GC.class_histogram, through the DiagnosticCommand
     * MBean; it runs a full collection first), taken before the tasks start and again while they
     * are parked; the difference divided by the task count is what each parked task holds.
     */

    private static final Field CONTINUATION;
    private static final Field TAIL;
    private static final Field SP;
    private static final Field BOTTOM;
    private static final Field PARENT;

    static {
        try {
            CONTINUATION = opened(Class.forName("java.lang.VirtualThread"), "cont");
            TAIL = opened(Class.forName("jdk.internal.vm.Continuation"), "tail");
            Class<?> chunk = Class.forName("jdk.internal.vm.StackChunk");
            SP = opened(chunk, "sp");
            BOTTOM = opened(chunk, "bottom");
            PARENT = opened(chunk, "parent");
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException(
                    "needs --add-opens java.base/java.lang=ALL-UNNAMED"
                            + " --add-opens java.base/jdk.internal.vm=ALL-UNNAMED (JDK 25)",
                    e);
        }
    }

    /** Set by the main thread to release the parked virtual threads; read by them. */
    private static volatile boolean released;

    private StackChunkProbe() {}

    /**
     * Runs the probe.
     *
     * @param args tasks parked at once (default 10,000), cycles (default 30), and which peer
     *     ({@code fiber}, {@code vthread} or {@code both}, the default)
     * @throws Exception if a task fails or the histogram cannot be read
     */
    public static void main(String[] args) throws Exception {
        int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int cycles = args.length > 1 ? Integer.parseInt(args[1]) : 30;
        String peer = args.length > 2 ? args[2] : "both";
        if (!List.of("fiber", "vthread", "both").contains(peer)) {
            throw new IllegalArgumentException("peer must be fiber, vthread or both, not " + peer);
        }
        if (!peer.equals("vthread")) {
            try (FiberIo io = FiberIo.builder().workers(2).build()) {
                for (int cycle = 0; cycle < cycles; cycle++) {
                    parkFibers(io, tasks, cycle, cycle == cycles - 1);
                }
            }
        }
        if (!peer.equals("fiber")) {
            for (int cycle = 0; cycle < cycles; cycle++) {
                parkVirtualThreads(tasks, cycle, cycle == cycles - 1);
            }
        }
    }

    private static void parkFibers(FiberIo io, int count, int cycle, boolean last) throws Exception {
        ParkToken[] tokens = new ParkToken[count];
        Thread[] threads = new Thread[count];
        CountDownLatch arrived = new CountDownLatch(count);
        List<Future<Integer>> tasks = new ArrayList<>(count);
        Map<String, long[]> before = last ? classHistogram() : null;
        Memory.startParkedFibers(Io.with(io), io, tasks, tokens, threads, arrived);
        report("fiber", cycle, threads, arrived, before);
        for (ParkToken park : tokens) {
            io.ready(park);
        }
        for (Future<Integer> task : tasks) {
            task.await();
        }
    }

    private static void parkVirtualThreads(int count, int cycle, boolean last) throws Exception {
        Thread[] threads = new Thread[count];
        CountDownLatch arrived = new CountDownLatch(count);
        List<FutureTask<Integer>> tasks = new ArrayList<>(count);
        Map<String, long[]> before = last ? classHistogram() : null;
        released = false;
        for (int i = 0; i < count; i++) {
            FutureTask<Integer> task = new FutureTask<>(() -> {
                arrived.countDown();
                while (!released) {
                    LockSupport.park();
                }
                return 1;
            });
            tasks.add(task);
            threads[i] = Thread.ofVirtual().start(task);
        }
        report("vthread", cycle, threads, arrived, before);
        released = true;
        for (Thread thread : threads) {
            LockSupport.unpark(thread);
        }
        for (FutureTask<Integer> task : tasks) {
            task.get();
        }
    }

    /** Waits until every thread is parked, then prints its chunks (and, given {@code before}, the histogram). */
    private static void report(
            String peer, int cycle, Thread[] threads, CountDownLatch arrived, Map<String, long[]> before)
            throws Exception {
        Memory.awaitParked(arrived, threads);
        Map<Long, Integer> usedBytes = new HashMap<>();
        long total = 0;
        for (Thread thread : threads) {
            long used = usedBytes(thread);
            total += used;
            usedBytes.merge(used, 1, Integer::sum);
        }
        System.out.printf(
                "%s cycle %d: chunk bytes used per task, mean %.1f; bytes=tasks %s%n",
                peer, cycle, total / (double) threads.length, new TreeMap<>(usedBytes));
        if (before != null) {
            printDifference(peer, before, classHistogram(), threads.length);
        }
    }

    /** The bytes the frames of {@code thread}'s stack chunks use. */
    private static long usedBytes(Thread thread) throws IllegalAccessException {
        long words = 0;
        for (Object chunk = TAIL.get(CONTINUATION.get(thread)); chunk != null; chunk = PARENT.get(chunk)) {
            words += BOTTOM.getInt(chunk) - SP.getInt(chunk);
        }
        return words * Long.BYTES;
    }

    /** Class name -> {instances, bytes}, from the JVM's class histogram (after a full collection). */
    private static Map<String, long[]> classHistogram() throws JMException {
        String text = (String) ManagementFactory.getPlatformMBeanServer()
                .invoke(
                        new ObjectName("com.sun.management:type=DiagnosticCommand"),
                        "gcClassHistogram",
                        new Object[] {new String[0]},
                        new String[] {String[].class.getName()});
        Map<String, long[]> classes = new HashMap<>();
        for (String line : text.split("\n")) {
            String[] fields = line.trim().split("\\s+"); // "num: instances bytes class-name [module]"
            if (fields.length >= 4 && fields[0].endsWith(":")) {
                classes.put(fields[3], new long[] {Long.parseLong(fields[1]), Long.parseLong(fields[2])});
            }
        }
        return classes;
    }

    /** Prints, per task, the classes whose bytes grew by at least 2 per task between the histograms. */
    private static void printDifference(String peer, Map<String, long[]> before, Map<String, long[]> after, int tasks) {
        double total = 0;
        List<Map.Entry<String, double[]>> rows = new ArrayList<>();
        for (Map.Entry<String, long[]> entry : after.entrySet()) {
            long[] was = before.getOrDefault(entry.getKey(), new long[2]);
            double bytes = (entry.getValue()[1] - was[1]) / (double) tasks;
            double instances = (entry.getValue()[0] - was[0]) / (double) tasks;
            total += bytes;
            if (Math.abs(bytes) >= 2) {
                rows.add(Map.entry(entry.getKey(), new double[] {bytes, instances}));
            }
        }
        rows.sort((a, b) -> Double.compare(b.getValue()[0], a.getValue()[0]));
        for (Map.Entry<String, double[]> row : rows) {
            System.out.printf(
                    "%s per task: %7.1f B %5.2f instances %s%n",
                    peer, row.getValue()[0], row.getValue()[1], row.getKey());
        }
        System.out.printf("%s per task: %7.1f B in all%n", peer, total);
    }

    private static Field opened(Class<?> owner, String name) throws NoSuchFieldException {
        Field field = owner.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }
}
