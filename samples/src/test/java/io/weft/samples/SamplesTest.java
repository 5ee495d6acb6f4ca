package io.weft.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.samples.Quotes.Quote;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class SamplesTest {

    /** Captures what a sample prints, one string per line. */
    private static final class Output {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final PrintStream stream = new PrintStream(bytes, true, StandardCharsets.UTF_8);

        List<String> lines() {
            return bytes.toString(StandardCharsets.UTF_8).lines().toList();
        }
    }

    @Test
    void quotesLooksUpThreePricesAndTheReplicaWinsTheRaceAgainstTheInFlightPrimary() {
        Output out = new Output();

        Quotes.Outcome outcome = Quotes.run(out.stream);

        assertEquals(
                List.of(
                        new Quote("ACME", 12_345, "exchange"),
                        new Quote("GLOBEX", 4_210, "exchange"),
                        new Quote("INITECH", 987, "exchange")),
                outcome.quotes());
        assertEquals(new Quote("ACME", 12_345, "replica"), outcome.winner());
        assertEquals(Future.State.CANCELLED, outcome.loserState());
        assertEquals(
                List.of(
                        "look-up: ACME 123.45 from exchange",
                        "look-up: GLOBEX 42.10 from exchange",
                        "look-up: INITECH 9.87 from exchange",
                        "race: winner ACME 123.45 from replica",
                        "race: the loser, primary, is CANCELLED",
                        "race: the primary's late reply changes nothing, it stays CANCELLED",
                        "race of two inline tasks, both already done: the first argument wins,"
                                + " ACME 123.45 from primary; the replica stays SUCCESS"),
                out.lines());
    }

    @Test
    void cancellationWakesTheSleeperRunsItsFinallyAndTheShieldDefersTheSecondCancel() throws InterruptedException {
        Output out = new Output();

        Cancellation.Outcome outcome = Cancellation.run(out.stream);

        assertEquals(
                new Cancellation.Outcome(true, Future.State.CANCELLED, true, "report saved", Future.State.CANCELLED),
                outcome);
        assertEquals(
                List.of(
                        "sleeper: handing out my future, then sleeping for an hour",
                        "canceller: the sleeper is asleep; cancelling it",
                        "sleeper: finally runs",
                        "main: cancel() returned true; the sleeper is CANCELLED",
                        "main: await() threw Cancelled",
                        "writer: cancelled inside a shield; saving the report anyway",
                        "writer: report saved",
                        "writer: shield exited; sleeping again",
                        "writer: the deferred cancel arrived at the first sleep after the shield",
                        "main: the writer is CANCELLED; its shielded work: report saved"),
                out.lines());
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.SECONDS) // five simulated hours must take no real time
    void virtualClockSleepsSimulatedHoursAndPrintsTheVirtualTime() {
        Output out = new Output();

        VirtualClock.Outcome outcome = VirtualClock.run(out.stream);

        assertEquals(new VirtualClock.Outcome(60, 5 * 3_600_000 + 15 * 60_000), outcome);
        assertEquals(
                List.of(
                        "[00:00:00.060 = 60 ms] the quotes sample's look-ups, unchanged: 3 quotes",
                        "[00:00:00.000 = 0 ms] night shift starts; waiting two hours for the backup window",
                        "[02:00:00.000 = 7200000 ms] backups start",
                        "[03:30:00.000 = 12600000 ms] database backed up",
                        "[04:15:00.000 = 15300000 ms] files backed up",
                        "[04:15:00.000 = 15300000 ms] backed up the database and the files",
                        "[05:15:00.000 = 18900000 ms] night shift ends"),
                out.lines());
    }

    @Test
    void bankRoutesByPidRestartsTheFailedAccountAndTimesOutTheSlowAuditOnTheVirtualClock() {
        Output out = new Output();

        Bank.Outcome outcome = Bank.run(out.stream);

        assertTrue(outcome.sameEveryRun(), "one worker and a virtual clock: the same lines every run");
        assertEquals(java.util.Map.of("alice", 70L, "bob", 80L, "carol", 150L), outcome.balances());
        List<String> lines = outcome.lines();
        assertTrue(lines.contains("[    0 ms] moved 30 from alice to bob"), String.join("\n", lines));
        assertTrue(lines.contains("[    0 ms] carol cannot pay 500"), String.join("\n", lines));
        assertTrue(lines.contains("[ 1000 ms] bob failed: corrupt record in bob"), String.join("\n", lines));
        assertTrue(lines.contains("[ 1000 ms] dead letter to bob: Corrupt"), String.join("\n", lines));
        assertTrue(
                lines.contains("[ 1250 ms] bob opens with 130"),
                "restarted after the 250 ms back-off, balance reloaded: " + String.join("\n", lines));
        assertTrue(lines.contains("[ 1250 ms] moved 50 from bob to carol"), String.join("\n", lines));
        assertTrue(
                lines.contains("[ 1750 ms] audit: auditor#4 did not answer within PT0.5S"), String.join("\n", lines));
        assertTrue(
                lines.stream().anyMatch(line -> line.startsWith("[ 1750 ms] deposit refused: no process carol#3")),
                String.join("\n", lines));
        assertTrue(lines.contains("[ 1750 ms] bank shut down; processes still running: []"), String.join("\n", lines));
        assertEquals(lines.size() + 1, out.lines().size(), "its lines, then the determinism check");
    }

    @Test
    void runAllRunsEverySampleInOrderUnderItsHeading() throws InterruptedException {
        Output out = new Output();

        Samples.runAll(out.stream);

        List<String> headings =
                out.lines().stream().filter(line -> line.startsWith("== ")).toList();
        assertEquals(
                List.of(
                        "== quotes: Io.async look-ups and Io.race",
                        "== cancellation: cancel a sleeping task, finally, Cancelled, Io.shield",
                        "== virtual clock: hours of sleeps in no time",
                        "== fibers: the same code on FiberIo, where tasks run at the same time",
                        "== simulation: Io.with on a virtual-clock FiberIo, and seeds that find an ordering bug",
                        "== pipeline: channels, a timeout and a structured scope",
                        "== streaming: a producer task into a Flow subscriber, paced by its demand",
                        "== bank: account processes addressed by pid, ask with a timeout, a restart"),
                headings);
        assertTrue(out.lines().contains("[05:15:00.000 = 18900000 ms] night shift ends"), out.lines()::toString);
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS) // simulated hours, 52 short simulations: no real waiting
    void simulationPrintsTheSameNightShiftEveryRunAndFindsTheSeedThatBreaksTheGreeting() {
        Output out = new Output();

        Simulated.Outcome outcome = Simulated.run(out.stream);

        assertTrue(outcome.sameEveryRun());
        assertEquals(
                List.of(
                        "[00:00:00.000 = 0 ms] night shift starts; waiting two hours for the backup window",
                        "[02:00:00.000 = 7200000 ms] backups start",
                        "[02:45:00.000 = 9900000 ms] files backed up",
                        "[03:30:00.000 = 12600000 ms] database backed up",
                        "[03:30:00.000 = 12600000 ms] backed up the database and the files",
                        "[04:30:00.000 = 16200000 ms] night shift ends"),
                outcome.nightShift(),
                "on fibers the backups overlap: files first");
        assertTrue(outcome.failingSeed() >= 0, "some seed out of 50 wakes the two tasks the other way round");
        assertEquals("said [goodbye, hello] at 100 ms", outcome.replayed());
        assertTrue(
                out.lines()
                        .contains("seed " + outcome.failingSeed()
                                + " breaks the greeting: said [goodbye, hello] at 100 ms"),
                out.lines()::toString);
    }

    @Test
    void fibersRunTheSameCodeConcurrently() {
        Output out = new Output();

        Fibers.Outcome outcome = Fibers.run(out.stream);

        assertEquals("replica", outcome.raceWinner());
        assertEquals(Future.State.CANCELLED, outcome.loserState());
        assertEquals(java.time.Duration.ofMinutes(270).toMillis(), outcome.nightShiftMs(), "the backups overlapped");
        assertEquals(50_005_000L, outcome.fanOutSum());
        assertTrue(
                out.lines()
                        .contains("[00:00:00.005 = 5 ms] race on fibers: the replica wins; the primary is CANCELLED"),
                String.join("\n", out.lines()));
        assertTrue(
                out.lines().contains("[03:30:00.000 = 12600000 ms] backed up the database and the files"),
                String.join("\n", out.lines()));
    }

    @Test
    void pipelinePricesEveryOrderInOrderAndFallsBackOnTimeouts() {
        Output out = new Output();

        List<Pipeline.Priced> priced = Pipeline.run(out.stream);

        assertEquals(
                List.of(1, 2, 3, 4, 5, 6),
                priced.stream().map(Pipeline.Priced::order).toList());
        assertEquals(
                List.of("quoted", "quoted", "list price", "quoted", "quoted", "list price"),
                priced.stream().map(Pipeline.Priced::source).toList());
        assertTrue(
                out.lines().contains("[00:00:00.010 = 10 ms] producer: order 4 queued"),
                "the producer waited for room (backpressure): " + String.join("\n", out.lines()));
        assertTrue(
                out.lines().contains("[00:00:00.120 = 120 ms] all 6 orders priced; the scope is done"),
                String.join("\n", out.lines()));
    }

    @Test
    void streamingPacesTheProducerByTheSubscribersDemand() {
        Output out = new Output();

        List<String> received = Streaming.run(out.stream);

        assertEquals(List.of("reading-1", "reading-2", "reading-3", "reading-4", "reading-5", "reading-6"), received);
        List<String> lines = out.lines();
        // two emits per processed pair: the third reading is emitted only after the request at 100 ms
        assertTrue(
                lines.indexOf("[00:00:00.100 = 100 ms] subscriber: processed a pair, request(2)")
                        < lines.indexOf("[00:00:00.100 = 100 ms] producer: emitted reading-3"),
                String.join("\n", lines));
        assertTrue(lines.contains("[00:00:00.000 = 0 ms] producer: emitted reading-2"), String.join("\n", lines));
        assertTrue(lines.contains("[00:00:00.200 = 200 ms] producer: emitted reading-6"), String.join("\n", lines));
        assertEquals(
                List.of(
                        "[00:00:00.200 = 200 ms] producer: done",
                        "[00:00:00.200 = 200 ms] subscriber: complete",
                        "[00:00:00.300 = 300 ms] subscriber: processed the last pair"),
                lines.subList(lines.size() - 3, lines.size()));
    }
}
