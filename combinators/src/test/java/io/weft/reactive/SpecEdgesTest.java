package io.weft.reactive;

import static io.weft.reactive.Recorder.awaitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.channel.Channel;
import io.weft.channel.ChannelClosed;
import io.weft.combinators.Futures;
import io.weft.fiber.FiberIo;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The corners a review found: several receivers on one inbox (no false §1.1, serial calls into the
 * subscription, §2.7), a receive under a timeout, inboxes read to the end inside a long task, a
 * bad request on a pending future, an {@code onSubscribe} that throws (§1.9), and emits left
 * behind by a producer that returned.
 */
class SpecEdgesTest {

    /**
     * A correct publisher on its own platform thread: never sends more than requested. Its
     * subscription records calls that overlap (§2.7 lets a subscription assume they do not) and
     * widens the window by spinning inside each call.
     */
    static final class Exact implements Publisher<Integer> {
        final long total;
        final AtomicInteger inCall = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();

        Exact(long total) {
            this.total = total;
        }

        @Override
        public void subscribe(Subscriber<? super Integer> s) {
            AtomicLong demand = new AtomicLong();
            AtomicBoolean cancelled = new AtomicBoolean();
            Thread emitter = Thread.ofPlatform().daemon().unstarted(() -> {
                long sent = 0;
                while (sent < total && !cancelled.get()) {
                    if (demand.get() > 0) {
                        demand.decrementAndGet();
                        s.onNext((int) sent++);
                    } else {
                        Thread.onSpinWait();
                    }
                }
                if (!cancelled.get()) {
                    s.onComplete();
                }
            });
            s.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                    enter();
                    demand.addAndGet(n);
                    leave();
                }

                @Override
                public void cancel() {
                    enter();
                    cancelled.set(true);
                    leave();
                }

                private void enter() {
                    if (inCall.incrementAndGet() > 1) {
                        overlaps.incrementAndGet();
                    }
                    for (int i = 0; i < 500; i++) {
                        Thread.onSpinWait();
                    }
                }

                private void leave() {
                    inCall.decrementAndGet();
                }
            });
            emitter.start();
        }
    }

    @Test
    void severalReceiversShareAnInboxWithoutFalseOverflowOrOverlappingCalls() {
        try (FiberIo io = FiberIo.builder().workers(4).build()) {
            for (int round = 0; round < 5; round++) {
                Exact publisher = new Exact(200_000);
                long received = io.call(() -> {
                    try (Inbox<Integer> inbox = Reactive.subscribe(publisher, 4)) {
                        List<Future<Long>> receivers = new ArrayList<>();
                        for (int r = 0; r < 8; r++) {
                            receivers.add(Io.async(() -> {
                                long n = 0;
                                try {
                                    while (true) {
                                        inbox.receive();
                                        n++;
                                    }
                                } catch (ChannelClosed end) {
                                    return n;
                                }
                            }));
                        }
                        long sum = 0;
                        for (Future<Long> f : receivers) {
                            sum += f.await(); // a false §1.1 would throw IllegalStateException here
                        }
                        return sum;
                    }
                });
                assertEquals(200_000, received, "round " + round);
                assertEquals(0, publisher.overlaps.get(), "round " + round + ": overlapping calls on the subscription");
            }
        }
    }

    /**
     * How many callbacks a task's {@code toString()} says are registered on it. One may be the
     * test's own await of that task (on a scheduling Io it registers while the task runs).
     */
    private static int waiters(String task) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("waiters=(\\d+)").matcher(task);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aReceiveUnderATimeoutLeavesTheStreamOpen(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Long> seen = opened.call(() -> {
                AtomicLong n = new AtomicLong();
                WeftPublisher<Long> ticks = Reactive.produce(emitter -> {
                    while (true) {
                        Io.sleep(Duration.ofMillis(30));
                        emitter.emit(n.getAndIncrement());
                    }
                });
                List<Long> out = new ArrayList<>();
                int timeouts = 0;
                try (Inbox<Long> inbox = Reactive.subscribe(ticks, 4)) {
                    while (out.size() < 3) {
                        try {
                            out.add(inbox.receive(Duration.ofMillis(5)));
                        } catch (TimedOut nothingYet) {
                            timeouts++;
                        }
                    }
                    assertFalse(inbox.isDone());
                }
                assertTrue(timeouts >= 5, timeouts + " timeouts");
                // and a receive() under Futures.timeout keeps the stream open too (it may drop the
                // one item that arrives exactly at its deadline, which receive(Duration) cannot)
                try (Inbox<Long> inbox = Reactive.subscribe(ticks, 4)) {
                    assertEquals(-1L, (long) Futures.timeoutOrDefault(Duration.ofMillis(5), inbox::receive, -1L));
                    assertFalse(inbox.isDone());
                }
                return out;
            });
            assertEquals(List.of(0L, 1L, 2L), seen); // many timeouts in between, nothing lost
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void inboxesReadToTheEndLeaveNothingOnTheTask(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            inboxesReadToTheEndLeaveNothingOnTheTask(opened.io());
        }
    }

    private static void inboxesReadToTheEndLeaveNothingOnTheTask(Io io) {
        String task = Io.with(io).call(() -> Io.async(() -> {
            for (int i = 0; i < 1_000; i++) {
                for (Integer ignored : Reactive.subscribe(Reactive.fromFuture(Future.completed(i)), 2)) {
                    // read to the end, never closed
                }
            }
            return Io.currentTask().orElseThrow().toString();
        }).await());
        assertTrue(waiters(task) <= 1, "registrations left on the long-lived task: " + task);
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aPublisherThatThrowsFromSubscribeLeavesNothingBound(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            aPublisherThatThrowsFromSubscribeLeavesNothingBound(opened.io());
        }
    }

    private static void aPublisherThatThrowsFromSubscribeLeavesNothingBound(Io io) {
        String task = Io.with(io).call(() -> Io.async(() -> {
            Publisher<Integer> broken = s -> {
                throw new IllegalStateException("broken publisher");
            };
            assertThrows(IllegalStateException.class, () -> Reactive.subscribe(broken, 2));
            return Io.currentTask().orElseThrow().toString();
        }).await());
        assertTrue(waiters(task) <= 1, task);
    }

    @Test
    void aBadRequestOnAPendingFutureLeavesNothingOnIt() {
        Future<Integer> pending = Future.from(new CompletableFuture<Integer>());
        WeftPublisher<Integer> publisher = Reactive.fromFuture(pending);
        for (int i = 0; i < 100; i++) {
            Recorder<Integer> recorder = Recorder.manual();
            publisher.subscribe(recorder);
            recorder.requestInvalid(0);
            assertInstanceOf(IllegalArgumentException.class, recorder.error());
        }
        assertFalse(pending.toString().contains("waiters="), pending.toString());
    }

    @Test
    void subscribeReturnsNormallyWhenOnSubscribeThrows() {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Thread.UncaughtExceptionHandler before = Thread.currentThread().getUncaughtExceptionHandler();
        Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
        AtomicInteger signals = new AtomicInteger();
        try {
            Subscriber<Integer> throwing = new Subscriber<>() {
                @Override
                public void onSubscribe(Subscription s) {
                    throw new IllegalStateException("boom in onSubscribe");
                }

                @Override
                public void onNext(Integer item) {
                    signals.incrementAndGet();
                }

                @Override
                public void onError(Throwable t) {
                    signals.incrementAndGet();
                }

                @Override
                public void onComplete() {
                    signals.incrementAndGet();
                }
            };
            AtomicBoolean produced = new AtomicBoolean();
            Reactive.<Integer>produce(e -> produced.set(true)).subscribe(throwing);
            Reactive.fromFuture(Future.completed(1)).subscribe(throwing);
            Reactive.<Integer>fromFuture(Future.failed(new IllegalStateException("x"))).subscribe(throwing);
            assertEquals(3, reported.size());
            assertEquals(0, signals.get()); // treated as cancelled (§2.13)
            assertFalse(produced.get()); // its producer never ran
        } finally {
            Thread.currentThread().setUncaughtExceptionHandler(before);
        }
    }

    @Test
    void anEmitLeftWaitingWhenTheProducerReturnsIsRefused() {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            AtomicReference<Future<Object>> child = new AtomicReference<>();
            Channel<String> parked = Channel.bounded(1);
            WeftPublisher<Integer> publisher = Io.with(io).call(() -> Reactive.produce(emitter -> {
                child.set(Io.async(() -> {
                    parked.send("about to emit");
                    emitter.emit(1); // no demand: waits
                    return null;
                }));
                parked.receive(); // the child is at its emit (or about to be)
            }));
            Recorder<Integer> recorder = Recorder.manual();
            publisher.subscribe(recorder);
            recorder.awaitTerminal();
            assertTrue(recorder.completed());
            awaitUntil(() -> child.get() != null && child.get().isDone());
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> child.get().await());
            assertTrue(refused.getMessage().contains("after the producer returned"), refused.getMessage());
            assertEquals(0, recorder.count());
            assertEquals(List.of(), recorder.violations());
        }
    }

    @Test
    void prefetchIsBoundedWithAClearError() {
        IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class,
                () -> Inbox.withPrefetch(Integer.MAX_VALUE));
        assertTrue(tooBig.getMessage().contains("65536"), tooBig.getMessage());
        assertEquals("Inbox[prefetch=65536, outstanding=0]", Inbox.withPrefetch(Inbox.MAX_PREFETCH).toString());
    }
}
