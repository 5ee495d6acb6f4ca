package io.weft.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.openjdk.jmh.util.ListStatistics;

/**
 * Writes {@code BENCHMARKS.md} from a JMH JSON result file: one table per workload with every
 * peer's score, error and unit, and FiberIo's ratio to the best other peer. Not thread-safe; a
 * command-line tool.
 *
 * {@snippet lang=sh :
 * java -cp benchmarks/target/benchmarks.jar io.weft.benchmarks.Report \
 *     benchmarks/target/results.json BENCHMARKS.md "benchmarks/run.sh quick"
 * }
 */
public final class Report {
    /** Peers in the order the tables list them. */
    private static final List<String> PEERS =
            List.of("fiber", "vthread", "fjp", "tpe", "threads", "kotlin", "reactor", "jdk", "floor", "blocking");
    /** The summary's ratio columns: the peers users choose between, then the floor. */
    private static final List<String> SUMMARY_PEERS =
            List.of("vthread", "fjp", "tpe", "threads", "kotlin", "reactor", "jdk", "floor");

    private static final Map<String, String> SUMMARY_NAMES = Map.of(
            "vthread", "vs JDK virtual threads",
            "fjp", "vs FJP / CompletableFuture",
            "tpe", "vs thread pool",
            "threads", "vs platform threads",
            "kotlin", "vs kotlinx.coroutines",
            "reactor", "vs Reactor",
            "jdk", "vs JDK SubmissionPublisher",
            "floor", "vs the floor");
    /** A score whose error exceeds this fraction of it is inconclusive: no ratio is quoted for it. */
    static final double INCONCLUSIVE_ERROR = 0.25;

    private static final Map<String, String> PEER_NAMES = Map.ofEntries(
            Map.entry("kotlin", "kotlinx.coroutines 1.11, Dispatchers.Default (2 threads)"),
            Map.entry(
                    "floor", "floor: JDK virtual threads on a trivial 2-carrier scheduler (a limit, not a competitor)"),
            Map.entry("fiber", "FiberIo (2 workers)"),
            Map.entry("vthread", "JDK virtual threads, default scheduler (parallelism 2)"),
            Map.entry("fjp", "ForkJoinPool(2) / CompletableFuture"),
            Map.entry("tpe", "ThreadPoolExecutor, 2 platform threads"),
            Map.entry("threads", "platform thread per connection (cached thread pool)"),
            Map.entry("reactor", "Reactor, Schedulers.newParallel(2)"),
            Map.entry("jdk", "JDK SubmissionPublisher chain, ForkJoinPool(2)"),
            Map.entry("blocking", "BlockingIo (inline; Weft's own floor, not a competitor)"),
            Map.entry(
                    "callback",
                    "CompletableFuture stage on an incomplete future (no thread, no stack; a reference, not a competitor)"));
    /** JMH's {@code -prof gc} result: bytes allocated per operation. */
    private static final String GC_BYTES = "gc.alloc.rate.norm";
    /** The secondary result that replaces the primary score: {@link Memory.Footprint}'s counter. */
    private static final String BYTES_PER_TASK = "bytesPerTask";
    /** The secondary results {@link CoreState} gives: the cores' round trip before and after each iteration. */
    private static final String CORE_ROUND_TRIP = "coreRoundTripNs";

    private static final String CORE_ROUND_TRIP_AFTER = "coreRoundTripAfterNs";
    /** The two placements of the cores the split by state reports, in its order. */
    private static final List<String> CORE_STATES = List.of("fast", "slow");
    /** What each workload does; the benchmarks' Javadoc says how each peer does it. */
    private static final Map<String, String> WORKLOADS = new LinkedHashMap<>();

    static {
        WORKLOADS.put(
                "TokioSuite.spawnManyLocal",
                "spawn_many_local: 10,000 tasks spawned from inside a task, then all awaited by it.");
        WORKLOADS.put(
                "TokioSuite.spawnManyRemoteIdle",
                "spawn_many_remote_idle: 10,000 tasks spawned from the benchmark thread (outside any task), then awaited.");
        WORKLOADS.put(
                "SpawnManyRemoteBusy.spawnManyRemoteBusy",
                "spawn_many_remote_busy: as remote_idle, while 2 spinner tasks keep both workers busy for the whole trial "
                        + "(5 µs of spinning, then a yield: Thread.yield on fibers, resubmission on tpe, running in place "
                        + "the submissions pending at its yield on fjp). Virtual threads are not run: with yield-looping virtual threads on both carriers, the JDK default "
                        + "scheduler never ran the remote spawns (see SpawnManyRemoteBusy's Javadoc).");
        WORKLOADS.put(
                "TokioSuite.yieldMany",
                "yield_many: 200 tasks × 1,000 yields, spawned from the benchmark thread (Thread.yield on fibers and virtual threads; yield() on kotlinx; resubmission to the back of a shared queue on fjp/tpe).");
        WORKLOADS.put(
                "TokioSuite.pingPong",
                "ping_pong: two tasks, started from the benchmark thread, pass a turn 1,000 round trips (fiber: ParkToken + Io.ready/suspendRaw; vthread: LockSupport park/unpark; fjp/tpe: two pool tasks, each parking its worker with LockSupport).");
        WORKLOADS.put(
                "TokioSuite.chainedSpawn",
                "chained_spawn: 1,000 tasks, each spawns the next and ends; the last completes a future.");
        WORKLOADS.put(
                "Futures.awaitChain",
                "chain of 100 awaits: each task awaits the previous one's value (CompletableFuture: thenApplyAsync; Reactor: publishOn + map).");
        WORKLOADS.put(
                "Futures.race",
                "race with loser cancellation, 100 in a row: a task returning at once vs one that would take 1 h, loser cancelled (Io.race; invokeAny on virtual threads; anyOf + cancel(true) of a sleeping pool task on fjp/tpe; select + cancel on kotlinx; Mono.firstWithValue of two subscribeOn monos).");
        for (String shape : new String[] {"1x1", "2x2"}) {
            for (int capacity : new int[] {1, 16, 1024}) {
                WORKLOADS.put(
                        "ChannelMpmc.mpmc" + shape + "Capacity" + capacity,
                        "channel MPMC, " + shape.replace("x", " producer(s) x ")
                                + " consumer(s), capacity " + capacity
                                + ": 10,000 items (Weft Channel between fibers vs ArrayBlockingQueue"
                                + " between JDK virtual threads).");
            }
        }
        WORKLOADS.put(
                "PublisherThroughput.pipeline",
                "Publisher throughput: 100,000 items through map(x + 1), filter(x % 3 != 0), "
                        + "map(x * 2) with an asynchronous, backpressured hop (buffer 256) before each operator and one before the "
                        + "consumer that sums (four hops); "
                        + "items/s = 100,000 / score. fiber: each operator a `Reactive.produce` task receiving from an `Inbox` (prefetch "
                        + "256), the consumer an Inbox in the root task; reactor: `Flux.range` on a worker of its own (`subscribeOn`) with `publishOn(parallel(2), 256)` before each "
                        + "operator and the `reduce`; kotlin: `buffer(256)` before each operator and the `fold`; jdk: a SubmissionPublisher source and three SubmissionPublisher processors that request only what "
                        + "their buffer has room for (a processor calling the blocking `submit` in `onNext` deadlocks on a 2-thread pool).");
        WORKLOADS.put(
                "PublisherThroughput.channelPipeline",
                "Publisher throughput, channel form: as pipeline, but FiberIo's "
                        + "hops are channels: a task receives from its upstream's Inbox and sends to a Channel of 256, published to the "
                        + "next hop by `Reactive.fromChannel`; the source is a task sending to a channel. Other peers run their pipeline "
                        + "shape (their hops are already queues or channels).");
        WORKLOADS.put(
                "MailboxThroughput.mailbox",
                "mailbox: 2 senders × 5,000 messages to one summing process, the sum read back at the end "
                        + "(a Weft process with an unbounded mailbox, sum by ask; a virtual thread taking from a "
                        + "LinkedBlockingQueue; a kotlinx Channel(UNLIMITED)-based actor). Messages/s = 10,000 / score.");
        WORKLOADS.put(
                "ForkJoinRecursion.fib",
                "recursive fork/join: fib(20), forking one half and computing the other, 10,945 tasks forked and joined "
                        + "(Io.async + await; a virtual thread per fork + get; RecursiveTask fork/join; async + await in "
                        + "coroutineScope). A report, not one of issue 11's targets.");
        WORKLOADS.put(
                "Futures.fanOutFanIn",
                "fan-out/fan-in: 1,000 tasks started, all values summed (await each; allOf; flatMap).");
        String parked = String.format(Locale.ROOT, "%,d", Memory.PARKED_TASKS);
        WORKLOADS.put(
                "Memory.parked",
                "memory: heap bytes per parked task, " + parked + " parked at once (not a time; lower is better). "
                        + "fiber: `Io.async` tasks on FiberIo, each parked in `Io.suspendRaw` on its own ParkToken; vthread: JDK virtual "
                        + "threads on the default scheduler, each running a FutureTask parked in `LockSupport.park`; kotlin: coroutines "
                        + "(`scope.async` on Dispatchers.Default) each suspended in `suspendCancellableCoroutine`; callback: a "
                        + "`CompletableFuture.thenApply` stage waiting on one incomplete future, a waiting task with no thread and no stack "
                        + "(a reference). Each measured iteration is one cycle (SingleShotTime): `System.gc()` until the used heap (Runtime "
                        + "total - free) settles, start the tasks, wait until each has counted down a latch and its thread is WAITING, "
                        + "settle the heap again and divide the difference by " + parked
                        + ", then release them all and check every "
                        + "result. Before that, " + Memory.WARM_UP_CYCLES
                        + " unmeasured cycles in the trial's setup and JMH's warm-up "
                        + "iterations let the JIT compile the frames down to the park (interpreted frames make the stacks larger). The "
                        + "score is the mean of the per-iteration "
                        + "secondary result `bytesPerTask` (JMH's console prints their sum). With one fork the error covers one JVM run: between "
                        + "runs, JIT decisions changed the stacks and so the scores by up to about 20% on a busy 2-core machine (within "
                        + "a run, by a few bytes). BlockingIo is not measured: it runs each task inline on the spawning thread, so "
                        + parked
                        + " parked tasks would need " + parked + " platform threads.");
        WORKLOADS.put(
                "EchoServer.echo",
                "echo server: " + EchoServer.CONNECTIONS + " loopback connections x "
                        + String.format(Locale.ROOT, "%,d", EchoServer.REQUESTS) + " requests of "
                        + EchoServer.MESSAGE_BYTES
                        + " bytes, blocking streams, one task per connection on each side (server handler and client), all on the "
                        + "runtime under test; requests per second, higher is better. Each peer runs in its own JVM forks.");
        WORKLOADS.put(
                "Floors",
                "Floors, per single operation: `parkUnparkPingPong` is one park/unpark round trip between two "
                        + "platform threads (the ping_pong loop on platform threads); `atomicLongCas` one uncontended AtomicLong "
                        + "compare-and-set; `virtualThreadYieldOnTrivialScheduler` one Thread.yield of a virtual thread built with "
                        + "VirtualThreadBuilder(Executor) on a single-thread ArrayDeque run loop (the floor under FiberIo's yield).");
    }

    private Report() {}

    /** One peer's score in one workload, with its bytes allocated per operation (NaN without {@code -prof gc}). */
    record Score(
            String workload,
            String peer,
            double score,
            double error,
            String unit,
            String mode,
            double bytesPerOp,
            long iterations) {
        boolean lowerIsBetter() {
            return !mode.equals("thrpt");
        }

        /** Whether the error is too wide (or unknown) to quote a ratio against this score. */
        boolean inconclusive() {
            return !(error <= INCONCLUSIVE_ERROR * Math.abs(score));
        }

        String errorPercent() {
            return Double.isNaN(error) ? "?" : String.format(Locale.ROOT, "%.0f%%", 100 * error / Math.abs(score));
        }
    }

    /**
     * One peer's iterations in one workload, split by the cores' state ({@link CoreState}): an
     * iteration counts in a state when the readings before and after it are both in that state's
     * range (without after-readings, from a result file of an older run: the one before the
     * fork's next iteration, or none for a fork's last); it counts in neither otherwise.
     */
    record StateSplit(Score fast, Score slow) {
        Score in(String state) {
            return state.equals("fast") ? fast : slow;
        }

        static StateSplit of(Score whole, Object scores, Object readings, Object afterReadings) {
            ListStatistics fast = new ListStatistics();
            ListStatistics slow = new ListStatistics();
            List<?> scoreForks = (List<?>) scores;
            List<?> readingForks = (List<?>) readings;
            List<?> afterForks = afterReadings instanceof List<?> list ? list : null;
            for (int fork = 0; fork < Math.min(scoreForks.size(), readingForks.size()); fork++) {
                List<?> values = (List<?>) scoreForks.get(fork);
                List<?> read = (List<?>) readingForks.get(fork);
                for (int i = 0; i < Math.min(values.size(), read.size()); i++) {
                    double before = number(read.get(i));
                    double after = afterForks != null
                            ? number(((List<?>) afterForks.get(fork)).get(i))
                            : i + 1 < read.size() ? number(read.get(i + 1)) : before;
                    if (Math.max(before, after) <= CoreState.FAST_MAX_NANOS) {
                        fast.addValue(number(values.get(i)));
                    } else if (Math.min(before, after) >= CoreState.SLOW_MIN_NANOS) {
                        slow.addValue(number(values.get(i)));
                    }
                }
            }
            return new StateSplit(part(whole, fast), part(whole, slow));
        }

        /** A score over some of {@code whole}'s iterations. */
        private static Score part(Score whole, ListStatistics iterations) {
            return meanOf(whole.workload(), whole.peer(), iterations, whole.unit(), whole.mode());
        }
    }

    /**
     * Reads the JMH JSON results and writes the Markdown report.
     *
     * @param args the JSON results, the Markdown file to write, the command that produced them and,
     *     optionally, the core-to-core readings taken around the run (CoreToCore), printed under CPU
     * @throws IOException if a file cannot be read or written
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 3 && args.length != 4) {
            System.err.println("usage: Report <jmh-results.json> <output.md> <command> [<core-to-core readings>]");
            System.exit(2);
        }
        Object parsed = new Json(Files.readString(Path.of(args[0]))).parse();
        if (!(parsed instanceof List<?> runs) || runs.isEmpty()) {
            throw new IllegalArgumentException(args[0] + " holds no JMH results");
        }
        String markdown = render(runs, args[2], args.length == 4 ? args[3] : null);
        Path output = Path.of(args[1]);
        String previous = Files.exists(output) ? Files.readString(output) : "";
        Files.writeString(output, keepingHandWritten(markdown, previous));
        System.out.println("wrote " + args[1] + " (" + runs.size() + " results)");
    }

    /** The heading words that mark a section of the report file as written by hand. */
    static final String HAND_WRITTEN = "not generated by Report";

    /**
     * Returns {@code generated} followed by what {@code previous} (the report file as it was) holds
     * from its first section heading that says {@link #HAND_WRITTEN} to its end: the sessions'
     * notes on runs kept below the tables, which a new run must not erase. Just {@code generated}
     * if there is no such heading.
     *
     * @param generated the tables of this run
     * @param previous the file's text before this run, or empty
     * @return the file's new text
     */
    static String keepingHandWritten(String generated, String previous) {
        int at = -1;
        for (int from = 0; (from = previous.indexOf("\n## ", from)) >= 0; from++) {
            int end = previous.indexOf('\n', from + 1);
            String heading = previous.substring(from + 1, end < 0 ? previous.length() : end);
            if (heading.contains(HAND_WRITTEN)) {
                at = from + 1;
                break;
            }
        }
        return at < 0 ? generated : generated + "\n" + previous.substring(at);
    }

    static String render(List<?> runs, String command, String coreToCore) throws IOException {
        Map<String, Map<String, Score>> byWorkload = new LinkedHashMap<>();
        Map<String, Map<String, StateSplit>> byState = new LinkedHashMap<>();
        Map<?, ?> first = (Map<?, ?>) runs.get(0);
        for (Object run : runs) {
            Map<?, ?> result = (Map<?, ?>) run;
            String benchmark = (String) result.get("benchmark");
            String workload = benchmark.substring(benchmark.lastIndexOf('.', benchmark.lastIndexOf('.') - 1) + 1);
            Map<?, ?> params = (Map<?, ?>) result.get("params");
            String peer = params != null && params.get("peer") != null ? (String) params.get("peer") : "floor";
            if (workload.startsWith("Floors.")) {
                peer = workload.substring("Floors.".length()); // all floors share one table
                workload = "Floors";
            }
            Map<?, ?> metric = (Map<?, ?>) result.get("primaryMetric");
            Map<?, ?> secondary = (Map<?, ?>) result.get("secondaryMetrics");
            Score score;
            double allocated = secondary != null && secondary.get(GC_BYTES) instanceof Map<?, ?> gc
                    ? number(gc.get("score"))
                    : Double.NaN;
            if (secondary != null && secondary.get(BYTES_PER_TASK) instanceof Map<?, ?> bytes) {
                score = perIterationMean(workload, peer, bytes, "bytes/task", (String) result.get("mode"));
            } else {
                score = new Score(
                        workload,
                        peer,
                        number(metric.get("score")),
                        number(metric.get("scoreError")),
                        (String) metric.get("scoreUnit"),
                        (String) result.get("mode"),
                        allocated,
                        iterations(metric.get("rawData")));
            }
            byWorkload.computeIfAbsent(workload, key -> new LinkedHashMap<>()).put(peer, score);
            if (secondary != null && secondary.get(CORE_ROUND_TRIP) instanceof Map<?, ?> readings) {
                Object after = secondary.get(CORE_ROUND_TRIP_AFTER) instanceof Map<?, ?> afterReadings
                        ? afterReadings.get("rawData")
                        : null;
                byState.computeIfAbsent(workload, key -> new LinkedHashMap<>())
                        .put(peer, StateSplit.of(score, metric.get("rawData"), readings.get("rawData"), after));
            }
        }

        StringBuilder out = new StringBuilder();
        out.append("# Weft benchmarks\n\n");
        out.append("FiberIo side by side with what users would pick instead, every peer in the same JMH run, all with ")
                .append(Peers.WORKERS)
                .append(" worker threads. Generated by `io.weft.benchmarks.Report` from JMH's JSON; ")
                .append("the code is in [`benchmarks/`](benchmarks/src/main/java/io/weft/benchmarks).\n\n");
        out.append("| | |\n|---|---|\n");
        out.append("| command | `").append(command).append("` |\n");
        out.append("| date | ")
                .append(ZonedDateTime.now(ZoneOffset.UTC)
                        .format(DateTimeFormatter.ISO_LOCAL_DATE_TIME)
                        .substring(0, 19))
                .append(" UTC |\n");
        out.append("| JDK | ")
                .append(first.get("jdkVersion"))
                .append(", ")
                .append(first.get("vmName"))
                .append(' ')
                .append(first.get("vmVersion"))
                .append(" |\n");
        out.append("| JMH | ")
                .append(first.get("jmhVersion"))
                .append(": ")
                .append(integer(first.get("forks")))
                .append(" fork(s), ")
                .append(integer(first.get("warmupIterations")))
                .append(" × ")
                .append(first.get("warmupTime"))
                .append(" warm-up, ")
                .append(integer(first.get("measurementIterations")))
                .append(" × ")
                .append(first.get("measurementTime"))
                .append(" measurement, mode ")
                .append(modes(runs))
                .append(" |\n");
        out.append("| JVM flags | `")
                .append(String.join(" ", strings(first.get("jvmArgs"))))
                .append("` |\n");
        out.append("| OS | ")
                .append(System.getProperty("os.name"))
                .append(' ')
                .append(System.getProperty("os.version"))
                .append(' ')
                .append(System.getProperty("os.arch"))
                .append(" |\n");
        out.append("| CPU | ")
                .append(Runtime.getRuntime().availableProcessors())
                .append(" × ")
                .append(cpuModel())
                .append(" |\n");
        if (coreToCore != null) {
            // The host's placement of the cores: iterations that run while the round trip is slow run slower
            out.append("| core-to-core round trip | ")
                    .append(coreToCore)
                    .append(" (`CoreToCore`; the 2-vCPU test VM switched between about 70 and 330 ns, and ")
                    .append("iterations that ran in the slow state took up to several times as long) |\n");
        }
        out.append('\n');

        out.append("**How to read the ratio.** Most workloads are measured as time per operation (one operation = the ")
                .append(
                        "whole workload, e.g. 10,000 spawns), so lower scores are better; the echo server in requests per second, ")
                .append(
                        "higher is better; the memory workload in heap bytes per parked task, lower is better. *FiberIo ratio vs a ")
                .append(
                        "peer* = that peer's time ÷ FiberIo's time (for throughput: FiberIo's ÷ the peer's): **> 1 means FiberIo ")
                .append(
                        "is better** by that factor, < 1 that it is behind. Against the floor (virtual threads on a trivial ")
                .append(
                        "two-carrier scheduler of our own: the limit of the engine FiberIo chose) the same ratio says how close ")
                .append(
                        "FiberIo comes to it: 1 is the limit; a trivial scheduler has no fairness or LIFO slot, so FiberIo can ")
                .append(
                        "beat it where those pay. Error is JMH's 99.9% confidence half-width over every fork's iterations; a row ")
                .append("whose error exceeds ")
                .append((int) (INCONCLUSIVE_ERROR * 100))
                .append("% of its score is **inconclusive**, and no ")
                .append(
                        "ratio is quoted against it. *B/op* is JMH's `-prof gc` allocation per operation (`gc.alloc.rate.norm`), ")
                .append(
                        "where the run had the profiler. Scores on a shared or noisy machine are not comparable across runs; the ")
                .append("ratios within one run are what this report is for.\n\n");

        StringBuilder summary = new StringBuilder();
        summary.append(
                        "## Summary\n\nFiberIo's score and its ratio against each peer (> 1: FiberIo better; – : the peer does not run ")
                .append("this workload).\n\n| workload | FiberIo | FiberIo B/op |");
        appendPeerColumns(summary, "", "|---|---:|---:|");
        StringBuilder tables = new StringBuilder();
        for (Map.Entry<String, Map<String, Score>> entry : ordered(byWorkload)) {
            String workload = entry.getKey();
            Map<String, Score> scores = entry.getValue();
            tables.append("## ").append(workload).append("\n\n");
            tables.append(WORKLOADS.getOrDefault(workload, "")).append("\n\n");
            Score fiber = scores.get("fiber");
            Optional<Score> best = scores.values().stream()
                    .filter(score -> PEERS.contains(score.peer())
                            && !score.peer().equals("fiber")
                            && !score.peer().equals("blocking")
                            && !score.peer().equals("floor"))
                    .min((a, b) -> Double.compare(
                            a.lowerIsBetter() ? a.score() : -a.score(), b.lowerIsBetter() ? b.score() : -b.score()));
            boolean withRatio = fiber != null;
            tables.append(withRatio ? "| peer" : "| floor")
                    .append(" | score | error (±) | error % | units | B/op |")
                    .append(withRatio ? " FiberIo ratio vs this peer |" : "")
                    .append('\n');
            tables.append("|---|---:|---:|---:|---|---:|")
                    .append(withRatio ? "---:|" : "")
                    .append('\n');
            for (Score score : inPeerOrder(scores)) {
                tables.append("| ")
                        .append(PEER_NAMES.getOrDefault(score.peer(), "`" + score.peer() + "`"))
                        .append(" | ")
                        .append(format(score.score()))
                        .append(" | ")
                        .append(format(score.error()))
                        .append(" | ")
                        .append(score.errorPercent())
                        .append(score.inconclusive() ? " (inconclusive)" : "")
                        .append(" | ")
                        .append(score.unit())
                        .append(" | ")
                        .append(Double.isNaN(score.bytesPerOp()) ? "–" : format(score.bytesPerOp()))
                        .append(" |");
                if (withRatio) {
                    tables.append(' ')
                            .append(score.peer().equals("fiber") ? "—" : ratio(fiber, score))
                            .append(" |");
                }
                tables.append('\n');
            }
            if (withRatio && best.isPresent()) {
                String ratio = ratio(fiber, best.get());
                tables.append("\n**FiberIo ratio vs the best other peer (")
                        .append(best.get().peer())
                        .append("): ")
                        .append(ratio)
                        .append("** (> 1: FiberIo better).\n");
            }
            if (withRatio) {
                summary.append("| ")
                        .append(workload)
                        .append(" | ")
                        .append(format(fiber.score()))
                        .append(' ')
                        .append(fiber.unit())
                        .append(fiber.inconclusive() ? " (±" + fiber.errorPercent() + ")" : "")
                        .append(" | ")
                        .append(Double.isNaN(fiber.bytesPerOp()) ? "–" : format(fiber.bytesPerOp()))
                        .append(" |");
                for (String peer : SUMMARY_PEERS) {
                    Score other = scores.get(peer);
                    summary.append(' ')
                            .append(other == null ? "–" : ratio(fiber, other))
                            .append(" |");
                }
                summary.append('\n');
            }
            tables.append('\n');
        }
        out.append(summary).append('\n');
        out.append(stateSection(byWorkload, byState));
        out.append(tables);
        out.append("## Not measured here\n\n")
                .append(
                        "- Memory per parked task under BlockingIo: it parks a task only by blocking a platform thread.\n")
                .append(
                        "- Publisher throughput on BlockingIo: each subscription's producer gets its own virtual thread there, "
                                + "so it would measure JDK virtual threads, not Weft.\n");
        return out.toString();
    }

    /**
     * The summary again, split by the cores' state at each iteration ({@link CoreState}), for the
     * workloads that read it; empty if none did.
     */
    private static String stateSection(
            Map<String, Map<String, Score>> byWorkload, Map<String, Map<String, StateSplit>> byState) {
        Map<String, Map<String, StateSplit>> withFiber = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, Score>> entry : ordered(byWorkload)) {
            Map<String, StateSplit> splits = byState.get(entry.getKey());
            if (splits != null && splits.containsKey("fiber")) {
                withFiber.put(entry.getKey(), splits);
            }
        }
        if (withFiber.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        out.append("## Summary by the cores' state\n\n")
                .append(
                        "The summary again, over only the iterations that ran in one placement of the cores: *fast* when ")
                .append(
                        "the cache-line round trip between the two cores, read just before and just after the iteration, ")
                .append(String.format(
                        Locale.ROOT,
                        "was at most %.0f ns both times; *slow* when at least %.0f ns both times",
                        CoreState.FAST_MAX_NANOS,
                        CoreState.SLOW_MIN_NANOS))
                .append(
                        " (`CoreState`; the host moves the VM's cores, and workloads whose tasks cross between workers ")
                .append("ran up to several times slower in the slow placement). FiberIo's cell is its mean over those ")
                .append("iterations, its error and their number; a peer's cell is the ratio under the same rule as ")
                .append("above, and the peer's number of iterations. Where either error exceeds ")
                .append((int) (INCONCLUSIVE_ERROR * 100))
                .append("% (or a side has fewer than three iterations) the cell reads *incl.*, with the ratio of the ")
                .append("means in brackets: a hint, not a finding (with a few iterations the 99.9% error is wide). ")
                .append("Iterations in neither state are left out. These split the run above; they are not a separate ")
                .append("run.\n\n")
                .append("| workload | cores | FiberIo (n) |");
        appendPeerColumns(out, " (n)", "|---|---|---:|");
        for (Map.Entry<String, Map<String, StateSplit>> entry : withFiber.entrySet()) {
            Map<String, StateSplit> splits = entry.getValue();
            for (String state : CORE_STATES) {
                Score fiber = splits.get("fiber").in(state);
                out.append("| ")
                        .append(entry.getKey())
                        .append(" | ")
                        .append(state)
                        .append(" | ")
                        .append(
                                fiber.iterations() == 0
                                        ? "–"
                                        : format(fiber.score()) + ' ' + fiber.unit() + " ±" + fiber.errorPercent())
                        .append(" (")
                        .append(fiber.iterations())
                        .append(") |");
                for (String peer : SUMMARY_PEERS) {
                    StateSplit other = splits.get(peer);
                    out.append(' ');
                    if (other == null) {
                        out.append('–');
                    } else {
                        Score score = other.in(state);
                        out.append(
                                        fiber.iterations() == 0 || score.iterations() == 0
                                                ? "–"
                                                : fiber.inconclusive() || score.inconclusive()
                                                        ? "incl. [" + meanRatio(fiber, score) + "]"
                                                        : ratio(fiber, score))
                                .append(" (")
                                .append(score.iterations())
                                .append(')');
                    }
                    out.append(" |");
                }
                out.append('\n');
            }
        }
        return out.append('\n').toString();
    }

    /**
     * The JMH modes of {@code runs}, each with the benchmarks that ran in it when there is more
     * than one (say "avgt; thrpt: EchoServer.echo").
     */
    static String modes(List<?> runs) {
        Map<String, List<String>> byMode = new TreeMap<>();
        for (Object run : runs) {
            Map<?, ?> result = (Map<?, ?>) run;
            String benchmark = (String) result.get("benchmark");
            String workload = benchmark.substring(benchmark.lastIndexOf('.', benchmark.lastIndexOf('.') - 1) + 1);
            List<String> workloads = byMode.computeIfAbsent((String) result.get("mode"), key -> new ArrayList<>());
            if (!workloads.contains(workload)) {
                workloads.add(workload);
            }
        }
        if (byMode.size() == 1) {
            return byMode.keySet().iterator().next();
        }
        // The mode most benchmarks ran in is named alone; the others list their benchmarks.
        String most = byMode.entrySet().stream()
                .max((a, b) -> Integer.compare(a.getValue().size(), b.getValue().size()))
                .orElseThrow()
                .getKey();
        StringBuilder out = new StringBuilder(most);
        byMode.forEach((mode, workloads) -> {
            if (!mode.equals(most)) {
                out.append("; ").append(mode).append(": ").append(String.join(", ", workloads));
            }
        });
        return out.toString();
    }

    /**
     * Ends a summary table's header: a column per summary peer (its name, then {@code suffix}),
     * then the separator row, {@code leading} for the columns before the peers'.
     */
    private static void appendPeerColumns(StringBuilder out, String suffix, String leading) {
        for (String peer : SUMMARY_PEERS) {
            out.append(' ').append(SUMMARY_NAMES.get(peer)).append(suffix).append(" |");
        }
        out.append('\n')
                .append(leading)
                .append("---:|".repeat(SUMMARY_PEERS.size()))
                .append('\n');
    }

    /** How many iterations JMH's {@code rawData} (one list per fork) holds. */
    private static long iterations(Object rawData) {
        return statisticsOf(rawData).getN();
    }

    /**
     * A score from an {@code @AuxCounters(EVENTS)} counter: JMH's own score for it is the sum over
     * the iterations, so this takes the mean of the per-iteration values and JMH's 99.9% error.
     */
    private static Score perIterationMean(String workload, String peer, Map<?, ?> metric, String unit, String mode) {
        ListStatistics statistics = statisticsOf(metric.get("rawData"));
        if (statistics.getN() == 0) {
            throw new IllegalArgumentException(workload + " (" + peer + ") has no per-iteration values");
        }
        return meanOf(workload, peer, statistics, unit, mode);
    }

    /**
     * A score from some iterations' values: their mean (NaN if none) and JMH's 99.9% error (NaN
     * under three iterations, as JMH gives it), with no allocation figure.
     */
    private static Score meanOf(String workload, String peer, ListStatistics iterations, String unit, String mode) {
        long n = iterations.getN();
        return new Score(
                workload,
                peer,
                n == 0 ? Double.NaN : iterations.getMean(),
                n < 3 ? Double.NaN : iterations.getMeanErrorAt(0.999),
                unit,
                mode,
                Double.NaN,
                n);
    }

    /** Every iteration's value in JMH's {@code rawData} (one list per fork). */
    private static ListStatistics statisticsOf(Object rawData) {
        ListStatistics statistics = new ListStatistics();
        if (rawData instanceof List<?> forks) {
            for (Object fork : forks) {
                for (Object iteration : (List<?>) fork) {
                    statistics.addValue(number(iteration));
                }
            }
        }
        return statistics;
    }

    private static List<Map.Entry<String, Map<String, Score>>> ordered(Map<String, Map<String, Score>> byWorkload) {
        List<Map.Entry<String, Map<String, Score>>> entries = new ArrayList<>(byWorkload.entrySet());
        List<String> order = new ArrayList<>(WORKLOADS.keySet());
        entries.sort((a, b) -> Integer.compare(rank(order, a.getKey()), rank(order, b.getKey())));
        return entries;
    }

    private static int rank(List<String> order, String workload) {
        int index = order.indexOf(workload);
        return index >= 0 ? index : order.size();
    }

    private static List<Score> inPeerOrder(Map<String, Score> scores) {
        List<Score> list = new ArrayList<>(scores.values());
        list.sort((a, b) -> Integer.compare(peerRank(a.peer()), peerRank(b.peer())));
        return list;
    }

    private static int peerRank(String peer) {
        int index = PEERS.indexOf(peer);
        return index >= 0 ? index : PEERS.size();
    }

    /** FiberIo's advantage over {@code other}: > 1 means FiberIo is better; "inconclusive" if either error is too wide. */
    private static String ratio(Score fiber, Score other) {
        return fiber.inconclusive() || other.inconclusive() ? "inconclusive" : meanRatio(fiber, other);
    }

    /** FiberIo's advantage over {@code other} by their means, whatever their errors. */
    private static String meanRatio(Score fiber, Score other) {
        double ratio = fiber.lowerIsBetter() ? other.score() / fiber.score() : fiber.score() / other.score();
        return String.format(Locale.ROOT, "%.2f×", ratio);
    }

    private static String format(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        double magnitude = Math.abs(value);
        String pattern = magnitude >= 100 ? "%,.0f" : magnitude >= 10 ? "%.1f" : magnitude >= 1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, pattern, value);
    }

    private static double number(Object value) {
        if (value instanceof Double number) {
            return number;
        }
        if (value instanceof String text) {
            return text.equalsIgnoreCase("NaN") ? Double.NaN : Double.parseDouble(text);
        }
        return Double.NaN;
    }

    private static String integer(Object value) {
        return value instanceof Double number ? String.valueOf(number.longValue()) : String.valueOf(value);
    }

    private static List<String> strings(Object value) {
        List<String> list = new ArrayList<>();
        if (value instanceof List<?> items) {
            for (Object item : items) {
                list.add(String.valueOf(item));
            }
        }
        return list;
    }

    private static String cpuModel() throws IOException {
        Path cpuinfo = Path.of("/proc/cpuinfo");
        if (Files.isReadable(cpuinfo)) {
            for (String line : Files.readAllLines(cpuinfo)) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        }
        return "unknown CPU model";
    }

    /** A minimal JSON reader for JMH's result file: objects, arrays, strings, numbers, literals. */
    static final class Json {
        private final String text;
        private int at;

        Json(String text) {
            this.text = text;
        }

        Object parse() {
            Object value = value();
            skipSpace();
            if (at != text.length()) {
                throw error("trailing characters");
            }
            return value;
        }

        private Object value() {
            skipSpace();
            if (at >= text.length()) {
                throw error("unexpected end");
            }
            char c = text.charAt(at);
            return switch (c) {
                case '{' -> object();
                case '[' -> array();
                case '"' -> string();
                case 't' -> literal("true", Boolean.TRUE);
                case 'f' -> literal("false", Boolean.FALSE);
                case 'n' -> literal("null", null);
                default -> number();
            };
        }

        private Map<String, Object> object() {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            skipSpace();
            if (text.charAt(at) == '}') {
                at++;
                return map;
            }
            while (true) {
                skipSpace();
                String key = string();
                skipSpace();
                expect(':');
                map.put(key, value());
                skipSpace();
                if (text.charAt(at) == ',') {
                    at++;
                } else {
                    expect('}');
                    return map;
                }
            }
        }

        private List<Object> array() {
            List<Object> list = new ArrayList<>();
            at++;
            skipSpace();
            if (text.charAt(at) == ']') {
                at++;
                return list;
            }
            while (true) {
                list.add(value());
                skipSpace();
                if (text.charAt(at) == ',') {
                    at++;
                } else {
                    expect(']');
                    return list;
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char escaped = text.charAt(at++);
                switch (escaped) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(escaped);
                }
            }
        }

        private Double number() {
            int start = at;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
            if (start == at) {
                throw error("unexpected character '" + text.charAt(at) + "'");
            }
            return Double.valueOf(text.substring(start, at));
        }

        private Object literal(String word, Object value) {
            if (!text.startsWith(word, at)) {
                throw error("expected " + word);
            }
            at += word.length();
            return value;
        }

        private void expect(char c) {
            if (at >= text.length() || text.charAt(at) != c) {
                throw error("expected '" + c + "'");
            }
            at++;
        }

        private void skipSpace() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at))) {
                at++;
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException("bad JSON at offset " + at + ": " + what);
        }
    }
}
