package io.weft.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Select}: exactly one clause commits, the others consume and deliver nothing; ordered and
 * fair forms; futures, timeouts, closed channels, cancellation; on every Io.
 */
class SelectTest {
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    /** The concurrent Ios with a real clock: the test thread watches a select wait. */
    static Stream<Named<Ios.Kind>> realClockConcurrent() {
        return Ios.concurrent().filter(named -> !named.getPayload().virtualClock());
    }

    private static <T> Future<T> spawn(Ios.Opened opened, java.util.concurrent.Callable<T> body) {
        return Io.with(opened.io()).call(() -> Io.async(body));
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void theOrderedFormTakesTheFirstReadyClauseAndLeavesTheOthersUntouched(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> a = Channel.bounded(2);
                Channel<String> b = Channel.bounded(2);
                Channel<String> full = Channel.bounded(1);
                full.trySend("old");
                Select<String> select = Select.<String>ordered()
                        .onReceive(a, x -> "a:" + x)
                        .onSend(full, "new", () -> "sent")
                        .onReceive(b, x -> "b:" + x);
                b.trySend("b1");
                assertEquals("b:b1", select.select(), "only b is ready");
                a.trySend("a1");
                b.trySend("b2");
                assertEquals("a:a1", select.select(), "both ready: the first clause wins");
                assertEquals("b2", b.tryReceive(), "the losing clause took nothing");
                assertEquals("old", full.tryReceive());
                assertEquals("sent", select.select(), "now only the send has room");
                assertEquals("new", full.tryReceive());
                assertNull(full.tryReceive(), "the send clause delivered exactly once");
                assertNull(a.tryReceive());
                return null;
            });
        }
    }

    @Test
    void theFairFormPicksEveryReadyClauseAndReplaysWithTheSameSeed() {
        List<String> first = fairPicks(42);
        List<String> again = fairPicks(42);
        List<String> other = fairPicks(7);
        assertEquals(first, again, "the same seed gives the same choices");
        assertTrue(!first.equals(other), "another seed gives other choices");
        long fromA = first.stream().filter("a"::equals).count();
        long fromC = first.stream().filter("c"::equals).count();
        // 900 runs, three always-ready clauses: each expected 300 times; 200 is > 7 standard deviations off
        assertTrue(fromA > 200 && fromC > 200, "a " + fromA + ", c " + fromC + " of 900");
    }

    private static List<String> fairPicks(long seed) {
        Channel<Integer> a = Channel.bounded(1);
        Channel<Integer> b = Channel.bounded(1);
        Channel<Integer> c = Channel.bounded(1);
        Select<String> select = Select.<String>fair(seed)
                .onReceive(a, x -> "a")
                .onReceive(b, x -> "b")
                .onReceive(c, x -> "c");
        List<String> picks = new ArrayList<>();
        for (int i = 0; i < 900; i++) {
            a.trySend(i);
            b.trySend(i);
            c.trySend(i);
            picks.add(select.select());
            int left = (a.tryReceive() == null ? 0 : 1)
                    + (b.tryReceive() == null ? 0 : 1)
                    + (c.tryReceive() == null ? 0 : 1);
            assertEquals(2, left, "run " + i + ": exactly one clause took its item");
        }
        return picks;
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aSelectWaitsForAnItemSentLaterAndTakesOnlyThatOne(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<Integer> a = Channel.bounded(1);
                Channel<Integer> b = Channel.bounded(1);
                Future<Void> sender = Io.async(() -> {
                    Io.sleep(Duration.ofMillis(20));
                    b.send(2);
                    return null;
                });
                String got = Select.<String>ordered()
                        .onReceive(a, x -> "a" + x)
                        .onReceive(b, x -> "b" + x)
                        .select();
                sender.await();
                assertEquals("b2", got);
                assertEquals(0, a.waitingReceivers(), "the losing clause left no node behind");
                assertEquals(0, b.waitingReceivers());
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aSendClauseWaitsForRoomAndTheOtherClausesDeliverNothing(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> full1 = Channel.bounded(1);
                Channel<String> full2 = Channel.bounded(1);
                full1.trySend("x");
                full2.trySend("y");
                Future<String> taker = Io.async(() -> {
                    Io.sleep(Duration.ofMillis(20));
                    return full2.receive();
                });
                String got = Select.<String>ordered()
                        .onSend(full1, "one", () -> "to 1")
                        .onSend(full2, "two", () -> "to 2")
                        .select();
                assertEquals("y", taker.await());
                assertEquals("to 2", got);
                assertEquals("two", full2.tryReceive());
                assertEquals("x", full1.tryReceive());
                assertNull(full1.tryReceive(), "the losing send delivered nothing");
                assertEquals(0, full1.waitingSenders());
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFutureClauseCommitsWhenTheFutureIsDoneAndReportsItsFailure(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> quiet = Channel.bounded(1);
                Future<Integer> answer = Io.async(() -> {
                    Io.sleep(Duration.ofMillis(20));
                    return 42;
                });
                String got = Select.<String>ordered()
                        .onReceive(quiet, x -> "item")
                        .onAwait(answer, v -> "answer " + v)
                        .select();
                assertEquals("answer 42", got);
                assertEquals(0, quiet.waitingReceivers());
                IllegalStateException boom = new IllegalStateException("boom");
                Future<Integer> failing = Io.async(() -> {
                    throw boom;
                });
                Select<String> onFailing =
                        Select.<String>ordered().onReceive(quiet, x -> "item").onAwait(failing, v -> "value");
                assertSame(boom, assertThrows(IllegalStateException.class, onFailing::select));
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void theTimeoutCommitsOnlyWhenNothingElseIsReadyAndOnTheIosClock(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> a = Channel.bounded(1);
                Select<String> select = Select.<String>ordered()
                        .onReceive(a, x -> x)
                        .onTimeout(Duration.ofMillis(30), () -> "timed out");
                long start = opened.io().nowMs();
                assertEquals("timed out", select.select());
                long waited = opened.io().nowMs() - start;
                assertTrue(waited >= 30, "timed out after " + waited + " ms");
                assertEquals(0, a.waitingReceivers(), "the timed-out select left no node behind");
                a.trySend("ready");
                assertEquals("ready", select.select(), "a ready clause beats the timeout");
                Select<String> atOnce =
                        Select.<String>ordered().onReceive(a, x -> x).onTimeout(Duration.ZERO, () -> "now");
                assertEquals("now", atOnce.select());
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void closedChannelsCommitTheirClauseWithTheEndOrTheWhenClosedValue(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> ended = Channel.bounded(1);
                ended.trySend("last");
                ended.close();
                Channel<String> open = Channel.bounded(1);
                Select<String> withEnd = Select.<String>ordered()
                        .onReceive(open, x -> "open")
                        .onReceive(ended, x -> "got " + x, () -> "ended");
                assertEquals("got last", withEnd.select(), "a closed channel still drains");
                assertEquals("ended", withEnd.select());
                Select<String> plain = Select.<String>ordered().onReceive(ended, x -> x);
                assertThrows(ChannelClosed.class, plain::select);

                List<String> undelivered = new ArrayList<>();
                Channel<String> closedForSends = Channel.bounded(1, undelivered::add);
                closedForSends.close();
                Select<String> send = Select.<String>ordered().onSend(closedForSends, "lost", () -> "sent");
                assertThrows(ChannelClosed.class, send::select);
                assertEquals(List.of("lost"), undelivered, "the refused item went to the hook");
                return null;
            });
        }
    }

    /**
     * A select woken for an item that another took used to judge its deadline by the clock's
     * reading, up to a millisecond early (see ChannelTimedReceiveTest's twin).
     */
    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void aSelectWokenForItemsOthersTakeNeverTimesOutEarly(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Long> early = opened.call(
                    () -> ChannelTimedReceiveTest.earlyTimeoutsWhileWokenForNothing(channel -> Select.<Boolean>ordered()
                            .onReceive(channel, x -> false)
                            .onTimeout(Duration.ofMillis(1), () -> true)
                            .select()));
            assertEquals(List.of(), early, "1 ms selects that timed out early (ns)");
        }
    }

    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void aCancelledSelectCommitsNothingAndLeavesNothingBehind(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Channel<String> a = Channel.bounded(1);
            Channel<String> full = Channel.bounded(1);
            full.trySend("old");
            AtomicInteger functionsRun = new AtomicInteger();
            Future<String> selecting = spawn(
                    opened,
                    () -> Select.<String>ordered()
                            .onReceive(a, x -> "a" + functionsRun.incrementAndGet())
                            .onSend(full, "new", () -> "sent" + functionsRun.incrementAndGet())
                            .select());
            await().atMost(PATIENCE)
                    .pollInterval(Duration.ofMillis(1))
                    .until(() -> a.waitingReceivers() == 1 && full.waitingSenders() == 1);
            selecting.cancel();
            assertThrows(Cancelled.class, selecting::await);
            assertEquals(0, a.waitingReceivers());
            assertEquals(0, full.waitingSenders());
            assertEquals(0, functionsRun.get());
            a.trySend("kept");
            assertEquals("kept", a.tryReceive(), "nothing was taken");
            assertEquals("old", full.tryReceive());
            assertNull(full.tryReceive(), "nothing was sent");
        }
    }

    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void aSelectWokenOnOneChannelThatCommitsAnotherPassesTheWakeUpOn(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Channel<String> a = Channel.bounded(2);
            Channel<String> b = Channel.bounded(1);
            Future<String> selecting = spawn(
                    opened,
                    () -> Select.<String>ordered()
                            .onReceive(b, x -> "b")
                            .onReceive(a, x -> "a")
                            .select());
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> a.waitingReceivers() == 1);
            Future<String> plain = spawn(opened, a::receive);
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> a.waitingReceivers() == 2);
            // b first, then a: whether the select wakes for b or for a, it commits b (the first
            // clause), and a wake-up it took on a must reach the plain receiver
            Io.with(opened.io()).call(() -> {
                b.send("b");
                a.send("a");
                return null;
            });
            assertEquals("b", selecting.await(PATIENCE));
            assertEquals("a", plain.await(PATIENCE));
        }
    }

    @Test
    void badInputIsRefusedWithAClearError() {
        Channel<String> ch = Channel.bounded(1);
        Select<String> select = Select.ordered();
        Channel<String> none = null;
        assertThrows(NullPointerException.class, () -> select.onReceive(none, x -> x));
        assertThrows(NullPointerException.class, () -> select.onReceive(ch, null));
        assertThrows(NullPointerException.class, () -> select.onReceive(ch, x -> x, null));
        assertThrows(NullPointerException.class, () -> select.onSend(ch, null, () -> "x"));
        Future<String> noFuture = null;
        assertThrows(NullPointerException.class, () -> select.onAwait(noFuture, x -> "x"));
        assertThrows(NullPointerException.class, () -> select.onTimeout(null, () -> "x"));
        IllegalStateException empty = assertThrows(IllegalStateException.class, select::select);
        assertTrue(empty.getMessage().contains("at least one clause"), empty.getMessage());
        select.onTimeout(Duration.ZERO, () -> "t");
        IllegalStateException twice =
                assertThrows(IllegalStateException.class, () -> select.onTimeout(Duration.ZERO, () -> "u"));
        assertTrue(twice.getMessage().contains("at most one timeout"), twice.getMessage());
        assertEquals("t", select.select());
        IllegalStateException frozen = assertThrows(IllegalStateException.class, () -> select.onReceive(ch, x -> x));
        assertTrue(frozen.getMessage().contains("once it has run"), frozen.getMessage());
    }
}
