package io.weft.samples;

import io.weft.Future;
import io.weft.Io;
import io.weft.fiber.FiberIo;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Shows the same Weft code on {@link FiberIo}: tasks become fibers that run at the same time, so
 * {@code Io.race} is won by the faster task and the night shift's two backups overlap. Thread-safe:
 * each run uses its own FiberIos.
 *
 * <p>The race and the night shift run on one worker with a virtual clock, so the printed times are
 * the same on every run; the fan-out runs 10,000 tasks on every core with the real clock.
 */
public final class Fibers {
    private Fibers() {}

    /**
     * What the sample found; immutable.
     *
     * @param raceWinner the value of the race's winner
     * @param loserState the loser's state once the race has returned (it joins the loser)
     * @param nightShiftMs the virtual time at the end of the night shift
     * @param fanOutSum the sum of the 10,000 tasks' values
     */
    public record Outcome(String raceWinner, Future.State loserState, long nightShiftMs, long fanOutSum) {}

    /**
     * Runs the race, the night shift and the fan-out, printing to {@code out}.
     *
     * @param out where to print
     * @return what the sample found
     */
    public static Outcome run(PrintStream out) {
        String winner;
        Future.State loserState;
        long nightShiftMs;
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Future<?>[] primary = new Future<?>[1];
            winner = io.call(() -> {
                Future<String> slow = Io.async(() -> reply("primary", Duration.ofMillis(200)));
                Future<String> fast = Io.async(() -> reply("replica", Duration.ofMillis(5)));
                primary[0] = slow;
                return Io.raceAndJoin(slow, fast);
            });
            loserState = primary[0].state();
            out.println(
                    VirtualClock.clock(io) + " race on fibers: the " + winner + " wins; the primary is " + loserState);
        }
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            io.run(() -> VirtualClock.nightShift(io, out));
            nightShiftMs = io.nowMs();
            out.println("on fibers the two backups overlapped: the shift ended at " + VirtualClock.clock(io)
                    + " instead of 05:15:00.000");
        }
        long sum;
        try (FiberIo io = FiberIo.create()) {
            sum = io.call(() -> {
                List<Future<Long>> parts = new ArrayList<>();
                for (long i = 1; i <= 10_000; i++) {
                    long n = i;
                    parts.add(Io.async(() -> n));
                }
                long total = 0;
                for (Future<Long> part : parts) {
                    total += part.await();
                }
                return total;
            });
            out.println("fan-out: 10,000 tasks on every core summed to " + sum);
        }
        return new Outcome(winner, loserState, nightShiftMs, sum);
    }

    private static String reply(String source, Duration latency) {
        Io.sleep(latency);
        return source;
    }
}
