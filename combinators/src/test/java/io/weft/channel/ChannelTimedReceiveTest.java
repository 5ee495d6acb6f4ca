package io.weft.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.TimedOut;
import io.weft.TimerHandle;
import io.weft.blocking.BlockingIo;
import io.weft.fiber.FiberIo;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link Channel#receive(Duration)}: the deadline is part of the wait, so an item is either
 * returned or left in the channel, a timed-out receiver leaves no node behind, and a wake-up it was
 * given is passed on (an untimed receiver beside it never hangs while items wait).
 */
class ChannelTimedReceiveTest {
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    /**
     * The concurrent Ios with a real clock: the test thread watches a receiver wait, which a
     * virtual clock would end at once by jumping to the deadline when every fiber is idle.
     */
    static Stream<Named<Ios.Kind>> realClockConcurrent() {
        return Ios.concurrent().filter(named -> !named.getPayload().virtualClock());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anItemThatIsThereIsReturnedWhateverTheTimeout(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> channel = Channel.bounded(2);
                channel.trySend("a");
                channel.trySend("b");
                assertEquals("a", channel.receive(Duration.ZERO));
                assertEquals("b", channel.receive(Duration.ofMillis(-5)));
                assertThrows(TimedOut.class, () -> channel.receive(Duration.ZERO));
                assertThrows(NullPointerException.class, () -> channel.receive(null));
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anEmptyChannelTimesOutAfterTheTimeoutOnTheIosClock(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            long waited = opened.call(() -> {
                Channel<String> channel = Channel.bounded(1);
                long start = opened.io().nowMs();
                TimedOut timedOut = assertThrows(TimedOut.class, () -> channel.receive(Duration.ofMillis(30)));
                assertTrue(timedOut.getMessage().contains("PT0.03S"), timedOut.getMessage());
                assertEquals(0, channel.waitingReceivers(), "the timed-out receiver left its node behind");
                return opened.io().nowMs() - start;
            });
            assertTrue(waited >= 30, "timed out after " + waited + " ms");
        }
    }

    /**
     * A receive whose timeout is beyond the clock's range used to arm a timer one millisecond
     * before the end of that range: on a virtual clock with nothing else to do, the clock jumped
     * there, the receive timed out, and every later deadline (saturated to the end) never came.
     * Now it waits as an untimed receive does, and the clock stays where it was.
     */
    @Test
    void aReceiveWithATimeoutBeyondTheClocksRangeDoesNotMoveAVirtualClock() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Channel<String> channel = Channel.bounded(1);
            Future<String> received = io.spawn(() -> channel.receive(Duration.ofSeconds(Long.MAX_VALUE)));
            await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 1);
            assertTrue(channel.trySend("late"), "the receiver waits, not timed out");
            assertEquals("late", received.await());
            assertEquals(0, io.nowMs(), "the virtual clock did not move");
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aClosedAndDrainedChannelEndsRatherThanTimesOut(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> channel = Channel.bounded(1);
                channel.trySend("last");
                channel.close();
                assertEquals("last", channel.receive(Duration.ofMillis(10)));
                assertThrows(ChannelClosed.class, () -> channel.receive(Duration.ofMillis(10)));
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void anItemSentWhileWaitingIsReturnedBeforeTheDeadline(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Channel<String> channel = Channel.bounded(1);
            Future<String> receiver =
                    Io.with(opened.io()).call(() -> Io.async(() -> channel.receive(Duration.ofDays(1))));
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> channel.waitingReceivers() == 1);
            channel.trySend("in time");
            assertEquals("in time", receiver.await());
        }
    }

    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void aCancelledTimedReceiveLeavesNothingBehind(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Channel<String> channel = Channel.bounded(1);
            Future<String> receiver =
                    Io.with(opened.io()).call(() -> Io.async(() -> channel.receive(Duration.ofDays(1))));
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(1)).until(() -> channel.waitingReceivers() == 1);
            receiver.cancel();
            assertThrows(Cancelled.class, receiver::await);
            assertEquals(0, channel.waitingReceivers());
            channel.trySend("kept");
            assertEquals("kept", channel.tryReceive());
        }
    }

    /**
     * Timed receivers with tiny timeouts race an untimed one and two senders: every item is
     * received exactly once, and the untimed receiver is never left parked while items wait (a
     * timed-out receiver that kept a wake-up, or left a stale node, would hang this test).
     */
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void timeoutsNeverLoseItemsOrWakeUps(Ios.Kind kind) {
        int perSender = 5_000;
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Integer> all = opened.call(() -> {
                Channel<Integer> channel = Channel.bounded(4);
                List<Future<Object>> senders = new ArrayList<>();
                for (int s = 0; s < 2; s++) {
                    int first = s * perSender;
                    senders.add(Io.async(() -> {
                        for (int i = first; i < first + perSender; i++) {
                            channel.send(i);
                        }
                        return null;
                    }));
                }
                List<Future<List<Integer>>> receivers = new ArrayList<>();
                receivers.add(Io.async(() -> {
                    List<Integer> got = new ArrayList<>();
                    for (int item : channel) {
                        got.add(item);
                    }
                    return got;
                }));
                for (int r = 0; r < 2; r++) {
                    receivers.add(Io.async(() -> {
                        List<Integer> got = new ArrayList<>();
                        while (true) {
                            try {
                                got.add(channel.receive(Duration.ofNanos(
                                        ThreadLocalRandom.current().nextLong(1, 2_000_000))));
                            } catch (TimedOut again) {
                                // try again
                            } catch (ChannelClosed end) {
                                return got;
                            }
                        }
                    }));
                }
                for (Future<Object> sender : senders) {
                    sender.await();
                }
                channel.close();
                List<Integer> received = new ArrayList<>();
                for (Future<List<Integer>> receiver : receivers) {
                    received.addAll(receiver.await());
                }
                return received;
            });
            assertEquals(2 * perSender, all.size());
            assertEquals(2 * perSender, new HashSet<>(all).size(), "an item was received twice");
        }
    }
    /**
     * A receiver woken for an item that another took used to judge its deadline by the clock's
     * reading, which, truncated to the millisecond, reaches the deadline up to a millisecond
     * before the wait has lasted its timeout: a 1 ms receive timed out after 0.1 ms. Now only
     * its timer (or a zero timeout) ends the wait.
     */
    @ParameterizedTest
    @MethodSource("realClockConcurrent")
    void aReceiverWokenForItemsOthersTakeNeverTimesOutEarly(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Long> early = opened.call(() -> earlyTimeoutsWhileWokenForNothing(channel -> {
                try {
                    channel.receive(Duration.ofMillis(1));
                    return false;
                } catch (TimedOut e) {
                    return true;
                }
            }));
            assertEquals(List.of(), early, "1 ms receives that timed out early (ns)");
        }
    }

    /**
     * Runs {@code timedWait} (a 1 ms wait for an item of the given channel; true if it timed out)
     * in the calling task until twenty have timed out, while another task keeps sending an item
     * and taking it back at once: each send wakes the waiter, which then nearly always finds
     * nothing (with more than one worker it may win the item: that wait does not count). Returns how long
     * the timeouts that came in less than their millisecond of real time took (ns).
     */
    static List<Long> earlyTimeoutsWhileWokenForNothing(Predicate<Channel<Integer>> timedWait) {
        Channel<Integer> channel = Channel.bounded(1);
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger wakeUps = new AtomicInteger();
        Future<Void> thief = Io.async(() -> {
            while (!done.get()) {
                channel.send(1); // wakes the waiter, if one waits
                channel.tryReceive(); // null if the waiter ran between the send and the take
                wakeUps.incrementAndGet();
                Io.yield();
            }
            return null;
        });
        List<Long> early = new ArrayList<>();
        for (int timeouts = 0; timeouts < 20; ) {
            long start = System.nanoTime();
            if (timedWait.test(channel)) {
                timeouts++;
                long waited = System.nanoTime() - start;
                if (waited < 1_000_000) {
                    early.add(waited);
                }
            }
        }
        done.set(true);
        thief.await();
        assertTrue(wakeUps.get() > 0);
        return early;
    }
    /**
     * A timed receive, or a select with a timeout, whose timer could not be armed (no memory for
     * it, an Io that refuses) used to leave its node linked: the stale node then took the next
     * wake-up, and a live receiver beside it slept next to an item.
     */
    @Test
    void aTimedWaitWhoseTimerCannotBeArmedLeavesNoNodeBehind() throws InterruptedException {
        Io io = timersRefused(BlockingIo.create());
        Channel<String> channel = Channel.bounded(1);
        Io.with(io).run(() -> {
            assertThrows(IllegalStateException.class, () -> channel.receive(Duration.ofSeconds(1)));
            assertThrows(
                    IllegalStateException.class,
                    () -> Select.<String>ordered()
                            .onReceive(channel, item -> item)
                            .onTimeout(Duration.ofSeconds(1), () -> "timed out")
                            .select());
        });
        assertEquals(0, channel.waitingReceivers(), "a node was left linked");
        AtomicReference<String> got = new AtomicReference<>();
        Thread receiver = Thread.ofPlatform().daemon().start(() -> got.set(channel.receive()));
        await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 1);
        channel.send("for the live receiver");
        receiver.join(PATIENCE.toMillis());
        assertEquals("for the live receiver", got.get());
    }

    /** {@code delegate}, except that arming a timer throws. */
    private static Io timersRefused(Io delegate) {
        return new Io() {
            @Override
            public void spawnRaw(RawTask task) {
                delegate.spawnRaw(task);
            }

            @Override
            public void suspendRaw(ParkToken park) {
                delegate.suspendRaw(park);
            }

            @Override
            public void ready(ParkToken park) {
                delegate.ready(park);
            }

            @Override
            public long poll(long deadlineMs) {
                return delegate.poll(deadlineMs);
            }

            @Override
            public long nowMs() {
                return delegate.nowMs();
            }

            @Override
            public TimerHandle armTimer(long deadlineMs, ParkToken park) {
                throw new IllegalStateException("no timer for you (test)");
            }
        };
    }
}
