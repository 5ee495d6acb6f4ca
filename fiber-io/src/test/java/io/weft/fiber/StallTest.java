package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.weft.Future;
import io.weft.Io;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fibers in blocking file reads keep their carriers (the JDK compensates for that only on its own
 * scheduler); the stall watch starts spare workers so the other tasks still run.
 */
class StallTest {

    static final int READERS = 4;

    /** Makes a named pipe: opening and reading it blocks in the kernel until a writer comes. */
    private static Path fifo(Path dir, String name) throws Exception {
        Path path = dir.resolve(name);
        Process mk = new ProcessBuilder("mkfifo", path.toString()).start();
        assumeTrue(mk.waitFor() == 0, "mkfifo is needed for real blocking file reads");
        return path;
    }

    /** Spawns a probe from this plain thread and returns how long it took to run, in microseconds. */
    private static long probeMicros(FiberIo io) {
        long start = System.nanoTime();
        long ran = io.spawn(System::nanoTime).await();
        return (ran - start) / 1_000;
    }

    @Test
    void fibersInBlockingFileReadsDoNotStopTheOtherTasks(@TempDir Path dir) throws Exception {
        List<Path> pipes = new ArrayList<>();
        for (int i = 0; i < READERS; i++) {
            pipes.add(fifo(dir, "pipe" + i));
        }
        try (FiberIo io = FiberIo.builder().workers(2).name("stall").build()) {
            CountDownLatch reading = new CountDownLatch(READERS);
            List<Future<Integer>> readers = new ArrayList<>();
            for (Path pipe : pipes) {
                readers.add(io.spawn(() -> {
                    reading.countDown();
                    try (FileInputStream in = new FileInputStream(pipe.toFile())) { // blocks until a writer opens
                        return in.read();
                    }
                }));
            }
            reading.await(); // the two workers are inside reads now; the other readers wait behind them
            List<Long> micros = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                micros.add(probeMicros(io)); // without spares this never returns
                Io.with(io).run(() -> Io.sleep(Duration.ofMillis(1)));
            }
            assertTrue(readers.stream().noneMatch(Future::isDone), "every reader is still blocked");
            await().until(() -> io.metrics().sparesStarted() >= 2);
            // one spare per stuck worker with work behind it, not one per look (a new spare is timed
            // from its first look, so it is not judged stuck at once)
            long spares = io.metrics().sparesStarted();
            assertTrue(spares <= 2L * READERS, () -> spares + " spares for " + READERS + " blocked readers");
            System.out.println("StallTest: probe latency with " + READERS + " fibers in blocking reads on 2 workers,"
                    + " spares started " + io.metrics().sparesStarted() + ": max "
                    + micros.stream().mapToLong(m -> m).max().orElseThrow()
                    + " us, median " + micros.stream().sorted().toList().get(micros.size() / 2) + " us, first "
                    + micros.get(0) + " us");

            for (Path pipe : pipes) {
                try (FileOutputStream out = new FileOutputStream(pipe.toFile())) {
                    out.write(7);
                }
            }
            for (Future<Integer> reader : readers) {
                assertEquals(7, reader.await());
            }
            // idle spares retire: only the two configured carriers stay
            await().until(() -> Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().startsWith("stall-spare-")));
            FiberMetrics retired = io.metrics();
            assertEquals(10, io.call(() -> Io.async(() -> 10).await()));
            // a retired spare is not busy: its busy time stays where it was (it used to go on
            // growing, its last wake-up taken for an awake period that never ended)
            FiberMetrics later = io.metrics();
            for (FiberMetrics.Worker spare : retired.workers()) {
                if (spare.spare()) {
                    assertEquals(
                            spare.busy(), later.workers().get(spare.index()).busy(), "spare " + spare.index());
                }
            }
        }
    }

    @Test
    void aVirtualClockOrAZeroThresholdStartsNoSpares() throws Exception {
        try (FiberIo io =
                FiberIo.builder().workers(1).stallThreshold(Duration.ZERO).build()) {
            CountDownLatch holding = new CountDownLatch(1);
            java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();
            io.spawn(() -> {
                holding.countDown();
                while (!released.get()) {
                    Thread.onSpinWait(); // keeps the only carrier (a latch would unmount the fiber)
                }
                return null;
            });
            holding.await();
            Future<String> behind = io.spawn(() -> "ran");
            // for 25 thresholds of the default: with the watch off, nothing runs it
            await().during(Duration.ofMillis(50))
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> behind.state() == Future.State.PENDING);
            assertEquals(0, io.metrics().sparesStarted());
            released.set(true);
            assertEquals("ran", behind.await());
        }
    }
}
