package io.weft.samples;

import io.weft.Future;
import io.weft.Io;
import io.weft.fiber.FiberIo;
import io.weft.fiber.Simulation;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Shows deterministic simulation on FiberIo: {@code Io.with} on a virtual-clock FiberIo with one
 * worker runs the night shift's tasks at the same time, in simulated hours, with the same output on
 * every run; then {@link Simulation} runs a small program under many scheduler seeds, finds the one
 * that breaks its hidden assumption about the order of two tasks waking at the same instant, and
 * replays it. Thread-safe: each run uses its own FiberIos.
 */
public final class Simulated {
    private Simulated() {}

    /**
     * What the sample found; immutable.
     *
     * @param nightShift the night shift's lines on fibers
     * @param sameEveryRun whether a second run printed the same lines
     * @param failingSeed the first seed that broke the greeting program, or -1
     * @param replayed the failure seen when that seed was replayed, or null
     */
    public record Outcome(List<String> nightShift, boolean sameEveryRun, long failingSeed, String replayed) {}

    /**
     * Runs both parts, printing to {@code out}.
     *
     * @param out where to print
     * @return what the sample found
     */
    public static Outcome run(PrintStream out) {
        List<String> first = nightShiftOnFibers();
        boolean same = first.equals(nightShiftOnFibers());
        first.forEach(out::println);
        out.println("a second run printed the same lines: " + same);

        long failingSeed = -1;
        String replayed = null;
        try {
            Simulation.explore(50, Simulated::greetThenWave);
            out.println("no seed out of 50 broke the greeting");
        } catch (Simulation.Failure found) {
            failingSeed = found.seed();
            out.println("seed " + failingSeed + " breaks the greeting: "
                    + found.getCause().getMessage());
            try {
                Simulation.replay(failingSeed, Simulated::greetThenWave);
            } catch (IllegalStateException again) {
                replayed = again.getMessage();
                out.println("replaying seed " + failingSeed + ": " + replayed);
            }
        }
        return new Outcome(first, same, failingSeed, replayed);
    }

    /** The night shift of the virtual-clock sample, on fibers: the two backups run at the same time. */
    private static List<String> nightShiftOnFibers() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Io.with(io).run(() -> VirtualClock.nightShift(io, capture)); // a root task: the clock counts it
        }
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    /**
     * Two tasks wake at the same instant; the program assumes the greeting is logged first. Nothing
     * promises that: any order of two ready tasks is legal.
     */
    private static String greetThenWave() {
        List<String> log = new ArrayList<>();
        Future<?> greet = Io.async(() -> {
            Io.sleep(Duration.ofMillis(100));
            synchronized (log) {
                return log.add("hello");
            }
        });
        Future<?> wave = Io.async(() -> {
            Io.sleep(Duration.ofMillis(100));
            synchronized (log) {
                return log.add("goodbye");
            }
        });
        greet.await();
        wave.await();
        if (!log.get(0).equals("hello")) {
            throw new IllegalStateException(
                    "said " + log + " at " + Io.current().nowMs() + " ms");
        }
        return "greeted";
    }
}
