package io.weft.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.blocking.BlockingIo;
import io.weft.channel.Channel;
import io.weft.combinators.Futures;
import io.weft.combinators.RetryPolicy;
import io.weft.combinators.Scope;
import io.weft.combinators.Semaphore;
import io.weft.fiber.FiberIo;
import io.weft.reactive.Inbox;
import io.weft.reactive.Reactive;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 12, part 3: with one worker and a virtual clock, a program that uses async, sleep, race,
 * Scope, Channel, Semaphore, Futures.timeout and retry, and a produced publisher consumed through
 * an Inbox, entered with {@code Io.with} from the test thread, prints the same trace in 20 runs;
 * and so does one written for BlockingIo's virtual clock, where the producer has a thread of its
 * own that takes turns with the test thread.
 */
class DeterministicReplayTest {

    /** One line per event, with the virtual time; shared by the program's tasks (one worker: no races). */
    private static final class Trace {
        private final List<String> lines = new ArrayList<>();

        synchronized void add(String event) {
            lines.add(Io.current().nowMs() + " " + event);
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }
    }

    /** The part both programs share: a race of sleepers, a timeout, a retry with seeded back-off. */
    private static void raceTimeoutAndRetry(Trace trace) {
        String winner = Io.race(
                Io.async(() -> {
                    Io.sleep(Duration.ofMillis(20));
                    return "slow";
                }),
                Io.async(() -> {
                    Io.sleep(Duration.ofMillis(7));
                    return "fast";
                }));
        trace.add("race " + winner);
        String timedOut = Futures.timeoutOrDefault(
                Duration.ofMillis(5),
                () -> {
                    Io.sleep(Duration.ofMillis(50));
                    return "finished";
                },
                "timed out");
        trace.add("timeout " + timedOut);
        AtomicInteger attempts = new AtomicInteger();
        String retried = Futures.retry(
                RetryPolicy.builder()
                        .maxAttempts(4)
                        .initialDelay(Duration.ofMillis(2))
                        .seed(7)
                        .build(),
                () -> {
                    trace.add("attempt " + attempts.incrementAndGet());
                    if (attempts.get() < 3) {
                        throw new IllegalStateException("not yet");
                    }
                    return "third time";
                });
        trace.add("retry " + retried);
    }

    private static void program(Trace trace) throws Exception {
        Channel<Integer> channel = Channel.bounded(2);
        Semaphore permits = new Semaphore(2);
        try (Scope scope = Scope.open()) {
            for (int p = 0; p < 3; p++) {
                int producer = p;
                scope.fork(() -> {
                    for (int i = 0; i < 4; i++) {
                        Io.sleep(Duration.ofMillis(3 + producer));
                        channel.send(producer * 10 + i);
                        trace.add("sent " + (producer * 10 + i));
                    }
                    return null;
                });
            }
            scope.fork(() -> {
                for (int i = 0; i < 12; i++) {
                    int item = channel.receive();
                    permits.acquire();
                    try {
                        trace.add("received " + item);
                        Io.sleep(Duration.ofMillis(1));
                    } finally {
                        permits.release();
                    }
                }
                return null;
            });
            scope.join();
        }
        raceTimeoutAndRetry(trace);
        try (Inbox<Integer> inbox = Reactive.subscribe(
                Reactive.<Integer>produce(emitter -> {
                    for (int i = 0; i < 5; i++) {
                        Io.sleep(Duration.ofMillis(2));
                        emitter.emit(i);
                        trace.add("emitted " + i);
                    }
                }),
                2)) {
            for (Integer item : inbox) {
                trace.add("inbox " + item);
            }
        }
        List<Future<Integer>> many = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            int n = i;
            many.add(Io.async(() -> {
                Io.sleep(Duration.ofMillis((n * 5) % 7));
                trace.add("task " + n);
                return n;
            }));
        }
        int sum = 0;
        for (Future<Integer> f : many) {
            sum += f.await();
        }
        trace.add("sum " + sum);
    }

    @Test
    void oneWorkerAndAVirtualClockReplayTheSameTraceTwentyTimes() {
        Set<List<String>> traces = new LinkedHashSet<>();
        for (int run = 0; run < 20; run++) {
            Trace trace = new Trace();
            try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
                Io.with(io).run(() -> {
                    try {
                        program(trace);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
            }
            traces.add(trace.lines());
        }
        List<String> first = traces.iterator().next();
        assertTrue(
                first.contains(first.get(first.size() - 1))
                        && first.get(first.size() - 1).endsWith("sum 190"),
                String.valueOf(first));
        assertEquals(1, traces.size(), "distinct traces: " + traces);
    }
    /**
     * The same library surface as {@link #program}, arranged for an inline Io: tasks run to the
     * end inside {@code async}, so the channel is big enough for its senders, and the only
     * concurrency is the producer's own thread against the test thread reading the Inbox. Both
     * sides sleep between steps, so without turns the two threads would move the one clock and
     * interleave their trace lines differently from run to run.
     */
    private static void inlineProgram(Trace trace) throws Exception {
        Channel<Integer> channel = Channel.bounded(12);
        Semaphore permits = new Semaphore(1);
        try (Scope scope = Scope.open()) {
            for (int p = 0; p < 3; p++) {
                int producer = p;
                scope.fork(() -> {
                    for (int i = 0; i < 4; i++) {
                        Io.sleep(Duration.ofMillis(1 + producer));
                        channel.send(producer * 10 + i);
                        trace.add("sent " + (producer * 10 + i));
                    }
                    return null;
                });
            }
            scope.fork(() -> {
                for (int i = 0; i < 12; i++) {
                    int item = channel.receive();
                    permits.acquire();
                    try {
                        trace.add("received " + item);
                    } finally {
                        permits.release();
                    }
                }
                return null;
            });
            scope.join();
        }
        raceTimeoutAndRetry(trace);
        for (int round = 0; round < 2; round++) {
            int r = round;
            try (Inbox<Integer> inbox = Reactive.subscribe(
                    Reactive.<Integer>produce(emitter -> {
                        trace.add("producer " + r + " started");
                        for (int i = 0; i < 6; i++) {
                            Io.sleep(Duration.ofMillis(1 + i % 3));
                            emitter.emit(i);
                            trace.add("emitted " + i);
                        }
                    }),
                    2)) {
                trace.add("subscribed " + r);
                for (Integer item : inbox) {
                    trace.add("inbox " + item);
                    Io.sleep(Duration.ofMillis(item % 2 == 0 ? 1 : 3));
                    trace.add("handled " + item);
                }
            }
        }
        trace.add("done");
    }

    @Test
    void blockingIoWithAVirtualClockReplaysTheSameTraceTwentyTimes() {
        Set<List<String>> traces = new LinkedHashSet<>();
        for (int run = 0; run < 20; run++) {
            Trace trace = new Trace();
            BlockingIo io = BlockingIo.builder().virtualClock().build();
            Io.with(io).run(() -> {
                try {
                    inlineProgram(trace);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            traces.add(trace.lines());
        }
        List<String> first = traces.iterator().next();
        // the test thread keeps the turn after subscribing, until it waits for the first item; the
        // producer's sleeps and the reader's then interleave by virtual time alone
        assertTrue(
                first.indexOf("107 subscribed 0") >= 0
                        && first.indexOf("107 subscribed 0") + 1 == first.indexOf("107 producer 0 started"),
                String.valueOf(first));
        assertTrue(first.indexOf("108 emitted 0") + 1 == first.indexOf("108 inbox 0"), String.valueOf(first));
        assertEquals("137 done", first.get(first.size() - 1), String.valueOf(first));
        assertEquals(
                1,
                traces.size(),
                () -> traces.size() + " distinct traces, the first two: "
                        + traces.stream().limit(2).map(String::valueOf).toList());
    }
}
