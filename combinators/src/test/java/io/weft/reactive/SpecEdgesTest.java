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
import io.weft.internal.TaskProbe;
import io.weft.testing.Ios;
import io.weft.testing.Parked;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
            long stopAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            for (int round = 0; round < 5 && (round == 0 || System.nanoTime() - stopAt < 0); round++) {
                // 50,000 items a round: under heavy machine load (4 busy threads on 2 cores) this
                // scenario of spinning emitter and workers falls to ~5,000 items/s, and 200,000 a
                // round timed out as if hung while it was still making progress. For the same
                // reason no round starts after 20 s (five took 1.6 s unloaded, 19.7 s loaded).
                Exact publisher = new Exact(50_000);
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
                assertEquals(50_000, received, "round " + round);
                assertEquals(0, publisher.overlaps.get(), "round " + round + ": overlapping calls on the subscription");
            }
        }
    }

    /**
     * How many waiters are registered on the current task. One may be the test's own await of
     * that task (on a scheduling Io it registers while the task runs).
     */
    private static int waitersOnThisTask() {
        return TaskProbe.waiterCount(Io.currentTask().orElseThrow());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aReceiveUnderATimeoutLeavesTheStreamOpen(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Long> seen = opened.call(() -> {
                // Item i is emitted only once a receive waiting for it has timed out: every item
                // comes after a timeout, none races one.
                List<CompletableFuture<Void>> timedOut =
                        List.of(new CompletableFuture<>(), new CompletableFuture<>(), new CompletableFuture<>());
                WeftPublisher<Long> items = Reactive.produce(emitter -> {
                    for (int i = 0; i < timedOut.size(); i++) {
                        Future.from(timedOut.get(i)).await();
                        emitter.emit((long) i);
                    }
                    Future.from(new CompletableFuture<Void>()).await(); // open, and nothing more
                });
                List<Long> out = new ArrayList<>();
                try (Inbox<Long> inbox = Reactive.subscribe(items, 4)) {
                    while (out.size() < 3) {
                        try {
                            out.add(inbox.receive(Duration.ofMillis(5)));
                        } catch (TimedOut nothingYet) {
                            timedOut.get(out.size()).complete(null);
                        }
                    }
                    assertFalse(inbox.isDone());
                }
                // and a receive() under Futures.timeout keeps the stream open too. Inline, the body of
                // the timeout runs to its end inside it: the item it waited for, emitted after the
                // deadline, is dropped with it. Scheduled, the body is cancelled at the deadline and
                // the item stays for the next receive.
                CompletableFuture<Void> emitFirst = new CompletableFuture<>();
                CompletableFuture<Void> emitSecond = new CompletableFuture<>();
                WeftPublisher<Long> late = Reactive.produce(emitter -> {
                    Future.from(emitFirst).await();
                    Io.sleep(Duration.ofMillis(10)); // past the deadline of a receive parked before emitFirst
                    emitter.emit(7L);
                    Future.from(emitSecond).await();
                    emitter.emit(8L);
                    Future.from(new CompletableFuture<Void>()).await();
                });
                try (Inbox<Long> inbox = Reactive.subscribe(late, 4)) {
                    if (kind.inline()) {
                        completeWhenParkedInReceive(Thread.currentThread(), emitFirst);
                    }
                    assertEquals(-1L, (long) Futures.timeoutOrDefault(Duration.ofMillis(5), inbox::receive, -1L));
                    assertFalse(inbox.isDone());
                    emitFirst.complete(null);
                    emitSecond.complete(null);
                    List<Long> after = new ArrayList<>();
                    do {
                        after.add(inbox.receive());
                    } while (after.getLast() != 8L);
                    assertEquals(kind.inline() ? List.of(8L) : List.of(7L, 8L), after);
                }
                return out;
            });
            assertEquals(List.of(0L, 1L, 2L), seen); // a timeout before each item, nothing lost
        }
    }

    /** Completes {@code gate}, from a helper thread, once {@code thread} is parked in {@link Inbox#receive()}. */
    private static void completeWhenParkedInReceive(Thread thread, CompletableFuture<Void> gate) {
        Thread.ofPlatform().daemon().name("emit-when-parked").start(() -> {
            try {
                awaitUntil(() -> Parked.at(thread, Inbox.class, "receive"));
                gate.complete(null);
            } catch (Throwable t) {
                gate.completeExceptionally(t);
            }
        });
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void inboxesReadToTheEndLeaveNothingOnTheTask(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            inboxesReadToTheEndLeaveNothingOnTheTask(opened.io());
        }
    }

    private static void inboxesReadToTheEndLeaveNothingOnTheTask(Io io) {
        int waiters = Io.with(io)
                .call(() -> Io.async(() -> {
                            for (int i = 0; i < 1_000; i++) {
                                for (Integer ignored :
                                        Reactive.subscribe(Reactive.fromFuture(Future.completed(i)), 2)) {
                                    // read to the end, never closed
                                }
                            }
                            return waitersOnThisTask();
                        })
                        .await());
        assertTrue(waiters <= 1, waiters + " registrations left on the long-lived task");
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aPublisherThatThrowsFromSubscribeLeavesNothingBound(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            aPublisherThatThrowsFromSubscribeLeavesNothingBound(opened.io());
        }
    }

    private static void aPublisherThatThrowsFromSubscribeLeavesNothingBound(Io io) {
        int waiters = Io.with(io)
                .call(() -> Io.async(() -> {
                            Publisher<Integer> broken = s -> {
                                throw new IllegalStateException("broken publisher");
                            };
                            assertThrows(IllegalStateException.class, () -> Reactive.subscribe(broken, 2));
                            return waitersOnThisTask();
                        })
                        .await());
        assertTrue(waiters <= 1, waiters + " registrations left on the task");
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
        assertEquals(0, TaskProbe.waiterCount(pending), "registrations left on the pending future");
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
            Reactive.<Integer>fromFuture(Future.failed(new IllegalStateException("x")))
                    .subscribe(throwing);
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
            WeftPublisher<Integer> publisher = Io.with(io)
                    .call(() -> Reactive.produce(emitter -> {
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
            IllegalStateException refused =
                    assertThrows(IllegalStateException.class, () -> child.get().await());
            assertTrue(refused.getMessage().contains("after the producer returned"), refused.getMessage());
            assertEquals(0, recorder.count());
            assertEquals(List.of(), recorder.violations());
        }
    }

    @Test
    void prefetchIsBoundedWithAClearError() {
        IllegalArgumentException tooBig =
                assertThrows(IllegalArgumentException.class, () -> Inbox.withPrefetch(Integer.MAX_VALUE));
        assertTrue(tooBig.getMessage().contains("65536"), tooBig.getMessage());
        assertEquals(
                "Inbox[prefetch=65536, outstanding=0]",
                Inbox.withPrefetch(Inbox.MAX_PREFETCH).toString());
    }
}
