package io.weft.samples;

import io.weft.Future;
import io.weft.Io;
import io.weft.blocking.BlockingIo;
import io.weft.samples.Quotes.Quote;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;

/**
 * Shows a virtual clock: unchanged Weft code sleeping simulated hours in no real time on
 * {@code BlockingIo.builder().virtualClock().build()}, with {@link Io#nowMs()} telling the
 * simulated time. Thread-safe: each run uses its own Ios.
 *
 * <p>A virtual clock starts at zero and, when the only thing left to do is wait for a timer, jumps
 * straight to its deadline. The times printed are therefore the same on every run.
 */
public final class VirtualClock {
    private VirtualClock() {}

    /**
     * What the sample found; immutable.
     *
     * @param quotesMs the virtual time after the quotes look-ups
     * @param nightShiftMs the virtual time at the end of the night shift
     */
    public record Outcome(long quotesMs, long nightShiftMs) {}

    /**
     * Runs the quotes look-ups, then a five-hour night shift, each on a new virtual-clock
     * BlockingIo, printing the virtual time to {@code out}.
     *
     * @param out where to print
     * @return the virtual times the two programs ended at
     */
    public static Outcome run(PrintStream out) {
        BlockingIo quotesIo = BlockingIo.builder().virtualClock().build();
        List<Quote> quotes = Io.with(quotesIo).call(Quotes::lookUpAll);
        out.println(clock(quotesIo) + " the quotes sample's look-ups, unchanged: " + quotes.size() + " quotes");

        BlockingIo nightIo = BlockingIo.builder().virtualClock().build();
        Io.with(nightIo).run(() -> nightShift(nightIo, out));
        return new Outcome(quotesIo.nowMs(), nightIo.nowMs());
    }

    /** Hours of simulated work; on a real clock this takes five hours and fifteen minutes. */
    static void nightShift(Io io, PrintStream out) {
        out.println(clock(io) + " night shift starts; waiting two hours for the backup window");
        Io.sleep(Duration.ofHours(2));
        out.println(clock(io) + " backups start");
        Future<String> database = Io.async(() -> backUp(io, out, "database", Duration.ofMinutes(90)));
        Future<String> files = Io.async(() -> backUp(io, out, "files", Duration.ofMinutes(45)));
        String first = database.await();
        String second = files.await();
        out.println(clock(io) + " backed up the " + first + " and the " + second);
        Io.sleep(Duration.ofHours(1));
        out.println(clock(io) + " night shift ends");
    }

    private static String backUp(Io io, PrintStream out, String what, Duration takes) {
        Io.sleep(takes);
        out.println(clock(io) + " " + what + " backed up");
        return what;
    }

    /** Formats the Io's clock as {@code [hh:mm:ss.mmm = n ms]}. */
    static String clock(Io io) {
        long ms = io.nowMs();
        Duration t = Duration.ofMillis(ms);
        return String.format(
                "[%02d:%02d:%02d.%03d = %d ms]",
                t.toHours(), t.toMinutesPart(), t.toSecondsPart(), t.toMillisPart(), ms);
    }
}
