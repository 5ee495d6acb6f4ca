package io.weft.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Report's split of the iterations by the cores' state (CoreState's readings). */
class ReportTest {
    private static final double FAST = 70;
    private static final double SLOW = 330;
    private static final double BETWEEN = 180;

    /** One iteration: its score and the readings before and after it. */
    private record Iteration(double score, double before, double after) {}

    /**
     * A new run rewrites the tables and keeps the hand-written sections below them: the first
     * heading that says so, and everything after it, headings without the words included.
     */
    @Test
    void aNewRunKeepsTheHandWrittenSectionsOfTheFile() {
        String previous = "# Weft benchmarks\n\n## Summary\n\nold table\n\n## Not measured here\n\n- x\n\n"
                + "## Engine runs, " + Report.HAND_WRITTEN + "\n\n### a session\n\nnotes\n\n## Mailbox\n\nmore\n";
        String generated = "# Weft benchmarks\n\n## Summary\n\nnew table\n";

        String written = Report.keepingHandWritten(generated, previous);

        assertEquals(
                generated + "\n## Engine runs, " + Report.HAND_WRITTEN
                        + "\n\n### a session\n\nnotes\n\n## Mailbox\n\nmore\n",
                written);
        assertEquals(generated, Report.keepingHandWritten(generated, ""), "a first run: the tables alone");
        assertEquals(generated, Report.keepingHandWritten(generated, "## Summary\n\nold\n"), "nothing hand-written");
    }

    @Test
    void anIterationCountsInAStateOnlyWhenBothReadingsAgree() throws IOException {
        List<Iteration> fiber = join(
                times(3, new Iteration(100, FAST, FAST)),
                times(3, new Iteration(300, SLOW, SLOW)),
                List.of(new Iteration(900, FAST, SLOW)), // the state changed during it: in neither
                List.of(new Iteration(900, BETWEEN, BETWEEN)));
        List<Iteration> fjp = join(times(3, new Iteration(200, FAST, FAST)), times(3, new Iteration(250, SLOW, SLOW)));

        List<String> rows = stateRows(json(List.of(result("fiber", fiber, true), result("fjp", fjp, true))));

        assertEquals(2, rows.size(), rows.toString());
        assertTrue(rows.get(0).startsWith("| TokioSuite.spawnManyLocal | fast | 100 us/op ±0% (3) |"), rows.get(0));
        assertTrue(rows.get(0).contains("| 2.00× (3) |"), rows.get(0));
        assertTrue(rows.get(1).startsWith("| TokioSuite.spawnManyLocal | slow | 300 us/op ±0% (3) |"), rows.get(1));
        assertTrue(rows.get(1).contains("| 0.83× (3) |"), rows.get(1));
    }

    @Test
    void aWideErrorWithholdsTheRatioAndGivesTheMeansInBrackets() throws IOException {
        List<Iteration> fiber =
                List.of(new Iteration(50, FAST, FAST), new Iteration(150, FAST, FAST), new Iteration(100, FAST, FAST));
        List<Iteration> fjp = times(3, new Iteration(200, FAST, FAST));

        List<String> rows = stateRows(json(List.of(result("fiber", fiber, true), result("fjp", fjp, true))));

        assertTrue(rows.get(0).contains("| incl. [2.00×] (3) |"), rows.get(0));
        assertFalse(rows.get(0).contains("| 2.00× "), rows.get(0));
        assertTrue(rows.get(1).contains("| – (0) |"), "no slow iterations on either side: " + rows.get(1));
    }

    @Test
    void withoutAfterReadingsTheNextIterationsBeforeReadingStandsIn() throws IOException {
        // An older result file: readings before each iteration only. The second iteration's
        // before-reading is slow, so the first (fast before it) counts in neither state.
        List<Iteration> fiber =
                join(List.of(new Iteration(100, FAST, Double.NaN)), times(3, new Iteration(300, SLOW, Double.NaN)));
        List<Iteration> fjp = List.of(new Iteration(200, FAST, Double.NaN), new Iteration(200, FAST, Double.NaN));

        List<String> rows = stateRows(json(List.of(result("fiber", fiber, false), result("fjp", fjp, false))));

        assertTrue(rows.get(0).startsWith("| TokioSuite.spawnManyLocal | fast | – (0) |"), rows.get(0));
        assertTrue(rows.get(1).startsWith("| TokioSuite.spawnManyLocal | slow | 300 us/op ±0% (3) |"), rows.get(1));
    }

    @Test
    void underThreeIterationsTheErrorIsUnknownAndTheRatioWithheld() throws IOException {
        List<Iteration> fiber = times(2, new Iteration(100, FAST, FAST));
        List<Iteration> fjp = times(3, new Iteration(200, FAST, FAST));

        List<String> rows = stateRows(json(List.of(result("fiber", fiber, true), result("fjp", fjp, true))));

        assertTrue(rows.get(0).startsWith("| TokioSuite.spawnManyLocal | fast | 100 us/op ±? (2) |"), rows.get(0));
        assertTrue(rows.get(0).contains("| incl. [2.00×] (3) |"), rows.get(0));
    }

    @Test
    void aReadingThatRanOutOfTimeCountsInNeitherState() throws IOException {
        List<Iteration> fiber = List.of(new Iteration(100, Double.NaN, FAST), new Iteration(100, FAST, Double.NaN));

        List<String> rows = stateRows(json(List.of(result("fiber", fiber, true))));

        assertTrue(rows.get(0).startsWith("| TokioSuite.spawnManyLocal | fast | – (0) |"), rows.get(0));
        assertTrue(rows.get(1).startsWith("| TokioSuite.spawnManyLocal | slow | – (0) |"), rows.get(1));
    }

    @Test
    void aRunWithoutReadingsHasNoSplit() throws IOException {
        String markdown = Report.render(parse(json(List.of(resultWithoutReadings()))), "test", null);

        assertFalse(markdown.contains("Summary by the cores' state"), markdown);
    }

    /** The header names each mode the run measured in, not the first result's alone. */
    @Test
    void theHeaderNamesEveryModeAndTheBenchmarksOfTheLessCommonOnes() {
        List<?> runs = parse(json(List.of(
                resultWithoutReadings(),
                resultWithoutReadings().replace("spawnManyLocal", "yieldMany"),
                resultWithoutReadings()
                        .replace("TokioSuite.spawnManyLocal", "EchoServer.echo")
                        .replace("\"avgt\"", "\"thrpt\""))));

        assertEquals("avgt; thrpt: EchoServer.echo", Report.modes(runs));
        assertEquals("avgt", Report.modes(parse(json(List.of(resultWithoutReadings())))));
    }

    /** The summary has a ratio column for every peer some workload compares FiberIo with. */
    @Test
    void theSummaryHasAColumnForTheThreadPoolAndTheJdkPublisher() throws IOException {
        String markdown = Report.render(
                parse(json(
                        List.of(resultWithoutReadings(), resultWithoutReadings().replace("\"fiber\"", "\"tpe\"")))),
                "test",
                null);
        int start = markdown.indexOf("## Summary");
        String summary = markdown.substring(start, markdown.indexOf("\n## ", start));
        String header = summary.lines()
                .filter(line -> line.startsWith("| workload"))
                .findFirst()
                .orElseThrow();
        assertTrue(header.contains("vs thread pool") && header.contains("vs JDK SubmissionPublisher"), header);
        String row = summary.lines()
                .filter(line -> line.startsWith("| TokioSuite.spawnManyLocal"))
                .findFirst()
                .orElseThrow();
        assertEquals(
                header.chars().filter(c -> c == '|').count(),
                row.chars().filter(c -> c == '|').count(),
                row);
        assertTrue(row.contains("| – | – | – | 1.00× |"), "B/op, vthread, fjp, then tpe's ratio: " + row);
    }

    private static List<Iteration> times(int n, Iteration iteration) {
        return Collections.nCopies(n, iteration);
    }

    @SafeVarargs
    private static List<Iteration> join(List<Iteration>... parts) {
        List<Iteration> all = new ArrayList<>();
        for (List<Iteration> part : parts) {
            all.addAll(part);
        }
        return all;
    }

    /** The rows of the split table, one per workload and state. */
    private static List<String> stateRows(String json) throws IOException {
        String markdown = Report.render(parse(json), "test", null);
        String section = markdown.substring(markdown.indexOf("## Summary by the cores' state"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        return section.lines().filter(line -> line.startsWith("| TokioSuite")).collect(Collectors.toList());
    }

    private static List<?> parse(String json) {
        return (List<?>) new Report.Json(json).parse();
    }

    private static String json(List<String> results) {
        return "[" + String.join(",", results) + "]";
    }

    /** One JMH result of spawnManyLocal for {@code peer}, one fork holding {@code iterations}. */
    private static String result(String peer, List<Iteration> iterations, boolean withAfter) {
        String scores = numbers(iterations.stream().map(Iteration::score).toList());
        String before = numbers(iterations.stream().map(Iteration::before).toList());
        String after = numbers(iterations.stream().map(Iteration::after).toList());
        double mean =
                iterations.stream().mapToDouble(Iteration::score).average().orElseThrow();
        return header(peer, mean)
                + "\"secondaryMetrics\":{\"coreRoundTripNs\":{\"score\":0,\"scoreUnit\":\"#\",\"rawData\":[" + before
                + "]}"
                + (withAfter
                        ? ",\"coreRoundTripAfterNs\":{\"score\":0,\"scoreUnit\":\"#\",\"rawData\":[" + after + "]}"
                        : "")
                + "},\"primaryMetric\":{\"score\":" + mean + ",\"scoreError\":1.0,\"scoreUnit\":\"us/op\","
                + "\"rawData\":[" + scores + "]}}";
    }

    private static String resultWithoutReadings() {
        return header("fiber", 100) + "\"secondaryMetrics\":{},\"primaryMetric\":{\"score\":100,\"scoreError\":1.0,"
                + "\"scoreUnit\":\"us/op\",\"rawData\":[[100,100]]}}";
    }

    private static String header(String peer, double mean) {
        return "{\"benchmark\":\"io.weft.benchmarks.TokioSuite.spawnManyLocal\",\"mode\":\"avgt\","
                + "\"jdkVersion\":\"25\",\"vmName\":\"vm\",\"vmVersion\":\"1\",\"jmhVersion\":\"1.37\",\"forks\":1,"
                + "\"warmupIterations\":0,\"warmupTime\":\"1 s\",\"measurementIterations\":3,"
                + "\"measurementTime\":\"1 s\",\"jvmArgs\":[],\"params\":{\"peer\":\"" + peer + "\"},";
    }

    /** One fork's values as a JSON array; NaN as JMH writes it, a string. */
    private static String numbers(List<Double> values) {
        return values.stream()
                .map(v -> Double.isNaN(v) ? "\"NaN\"" : String.format(Locale.ROOT, "%.1f", v))
                .collect(Collectors.joining(",", "[", "]"));
    }
}
