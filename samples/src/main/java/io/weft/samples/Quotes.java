package io.weft.samples;

import io.weft.Future;
import io.weft.Io;
import io.weft.blocking.BlockingIo;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Shows three price look-ups started with {@link Io#async}, and an {@link Io#race} between a slow
 * primary and a fast replica whose loser is cancelled. Thread-safe: each run uses its own
 * {@link BlockingIo}.
 *
 * <p>A look-up is simulated with {@link Io#sleep} on the installed Io's clock, so the same code
 * also runs on a virtual clock ({@link VirtualClock} does that).
 *
 * <p>BlockingIo runs an {@code Io.async} task inline: the future it returns is already done. A race
 * between two such futures is decided by the tie rule (the first argument wins) and leaves the
 * loser nothing to cancel; the sample shows that too. The slow primary is therefore a request still
 * in flight: the {@link CompletableFuture} of a callback-style client, adapted with
 * {@link Future#from}. That is the shape a slow remote call has for an inline Io.
 */
public final class Quotes {
    /** Simulated prices in cents; one table, so every source agrees. */
    private static final Map<String, Long> PRICES = Map.of("ACME", 12_345L, "GLOBEX", 4_210L, "INITECH", 987L);

    private Quotes() {}

    /**
     * A price from one source; immutable.
     *
     * @param symbol the ticker symbol
     * @param cents the price in cents
     * @param source where the price came from
     */
    public record Quote(String symbol, long cents, String source) {
        @Override
        public String toString() {
            return String.format("%s %d.%02d from %s", symbol, cents / 100, cents % 100, source);
        }
    }

    /**
     * What the sample found; immutable.
     *
     * @param quotes the three look-ups, in the order they were started
     * @param winner the race's winner
     * @param loserState the state of the race's loser, the primary, right after the race
     */
    public record Outcome(List<Quote> quotes, Quote winner, Future.State loserState) {}

    /**
     * Runs the sample on a new BlockingIo (real clock), printing what happens to {@code out}.
     *
     * @param out where to print
     * @return what the sample found
     */
    public static Outcome run(PrintStream out) {
        Io io = BlockingIo.create();
        return Io.with(io).call(() -> {
            List<Quote> quotes = lookUpAll();
            for (Quote quote : quotes) {
                out.println("look-up: " + quote);
            }

            // The primary's reply has not arrived yet; the replica answers after 5 ms.
            CompletableFuture<Quote> primaryReply = new CompletableFuture<>();
            Future<Quote> primary = Future.from(primaryReply);
            Future<Quote> replica = Io.async(() -> lookUp("ACME", "replica", Duration.ofMillis(5)));
            Quote winner = Io.race(primary, replica);
            Future.State loserState = primary.state();
            out.println("race: winner " + winner);
            out.println("race: the loser, primary, is " + loserState);
            primaryReply.complete(new Quote("ACME", PRICES.get("ACME"), "primary"));
            out.println("race: the primary's late reply changes nothing, it stays " + primary.state());

            // Two inline tasks: both are done before the race looks, so the first argument wins.
            Future<Quote> slow = Io.async(() -> lookUp("ACME", "primary", Duration.ofMillis(50)));
            Future<Quote> fast = Io.async(() -> lookUp("ACME", "replica", Duration.ofMillis(5)));
            Quote tie = Io.race(slow, fast);
            out.println("race of two inline tasks, both already done: the first argument wins, " + tie
                    + "; the replica stays " + fast.state());
            return new Outcome(quotes, winner, loserState);
        });
    }

    /**
     * Looks up three prices, each in its own task on the installed Io, and awaits them all.
     *
     * @return the quotes for ACME, GLOBEX and INITECH, in that order
     */
    public static List<Quote> lookUpAll() {
        Future<Quote> acme = Io.async(() -> lookUp("ACME", "exchange", Duration.ofMillis(30)));
        Future<Quote> globex = Io.async(() -> lookUp("GLOBEX", "exchange", Duration.ofMillis(20)));
        Future<Quote> initech = Io.async(() -> lookUp("INITECH", "exchange", Duration.ofMillis(10)));
        return List.of(acme.await(), globex.await(), initech.await());
    }

    /** A simulated remote look-up: waits {@code latency} on the installed Io's clock. */
    private static Quote lookUp(String symbol, String source, Duration latency) {
        Io.sleep(latency);
        return new Quote(symbol, PRICES.get(symbol), source);
    }
}
