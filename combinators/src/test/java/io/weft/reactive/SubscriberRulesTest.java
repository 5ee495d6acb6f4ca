package io.weft.reactive;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.blocking.BlockingIo;
import io.weft.channel.Channel;
import io.weft.fiber.FiberIo;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Issue 14, part 1: the Reactive Streams rules the TCK does not see. A subscriber that throws from
 * a signal breaks §2.13: the publisher treats it as cancelled, never throws it at whoever called
 * subscribe or request (§1.9, §3.16), and reports it (the Io's handler, else the thread's) instead
 * of dropping it. Signals do not run inside a future's completion. An Inbox asks nothing of a
 * subscription after its terminal signal (§2.4) and keeps the first failure it saw.
 */
class SubscriberRulesTest {

    /** An Io of each kind whose uncaught-exception handler records what it gets. */
    record Reporting(Io io, List<Throwable> reported, Runnable closer) implements AutoCloseable {
        @Override
        public void close() {
            closer.run();
        }
    }

    static Stream<Named<Function<List<Throwable>, Reporting>>> ios() {
        return Stream.of(
                Named.of(
                        "BlockingIo",
                        reported -> new Reporting(
                                BlockingIo.builder()
                                        .uncaughtExceptionHandler((t, e) -> reported.add(e))
                                        .build(),
                                reported,
                                () -> {})),
                Named.of("FiberIo", reported -> {
                    FiberIo io = FiberIo.builder()
                            .workers(2)
                            .uncaughtExceptionHandler((t, e) -> reported.add(e))
                            .build();
                    return new Reporting(io, reported, io::close);
                }));
    }

    /** A subscriber that throws {@code boom} from the signal named {@code throwsFrom}, and records the rest. */
    static final class Throwing implements Subscriber<Object> {
        final String throwsFrom;
        final RuntimeException boom;
        final List<String> signals = new CopyOnWriteArrayList<>();
        volatile Subscription subscription;

        Throwing(String throwsFrom, RuntimeException boom) {
            this.throwsFrom = throwsFrom;
            this.boom = boom;
        }

        private void signal(String name) {
            signals.add(name);
            if (name.equals(throwsFrom)) {
                throw boom;
            }
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            signal("onSubscribe");
        }

        @Override
        public void onNext(Object item) {
            signal("onNext");
        }

        @Override
        public void onError(Throwable t) {
            signal("onError");
        }

        @Override
        public void onComplete() {
            signal("onComplete");
        }
    }

    private static void awaitReported(List<Throwable> reported, Throwable expected) {
        await().atMost(Duration.ofSeconds(20)).until(() -> reported.contains(expected));
        assertEquals(List.of(expected), reported);
    }

    // ------------------------------------------------------------ fromFuture

    @ParameterizedTest
    @MethodSource("ios")
    void aDoneFuturesSubscriberThatThrowsFromOnNextDoesNotMakeRequestThrow(Function<List<Throwable>, Reporting> make) {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (Reporting r = make.apply(reported)) {
            IllegalStateException boom = new IllegalStateException("onNext broke");
            Throwing subscriber = new Throwing("onNext", boom);
            Io.with(r.io()).run(() -> Reactive.fromFuture(Future.completed("v")).subscribe(subscriber));
            subscriber.subscription.request(1); // delivers on this stack: must return normally (§3.16)
            awaitReported(reported, boom);
            assertEquals(List.of("onSubscribe", "onNext"), subscriber.signals, "nothing after the onNext that threw");
        }
    }

    @ParameterizedTest
    @MethodSource("ios")
    void aFailedFuturesSubscriberThatThrowsFromOnErrorDoesNotMakeSubscribeThrow(
            Function<List<Throwable>, Reporting> make) {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (Reporting r = make.apply(reported)) {
            IllegalStateException boom = new IllegalStateException("onError broke");
            Throwing subscriber = new Throwing("onError", boom);
            Io.with(r.io())
                    .run(() -> Reactive.fromFuture(Future.failed(new IllegalArgumentException("the outcome")))
                            .subscribe(subscriber)); // §1.9: returns normally
            awaitReported(reported, boom);
            assertEquals(List.of("onSubscribe", "onError"), subscriber.signals);
        }
    }

    @ParameterizedTest
    @MethodSource("ios")
    void anEmptyFuturesSubscriberThatThrowsFromOnCompleteDoesNotMakeSubscribeThrow(
            Function<List<Throwable>, Reporting> make) {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (Reporting r = make.apply(reported)) {
            IllegalStateException boom = new IllegalStateException("onComplete broke");
            Throwing subscriber = new Throwing("onComplete", boom);
            Io.with(r.io())
                    .run(() -> Reactive.fromFuture(Future.completed(null)).subscribe(subscriber));
            awaitReported(reported, boom);
            assertEquals(List.of("onSubscribe", "onComplete"), subscriber.signals);
        }
    }

    @ParameterizedTest
    @MethodSource("ios")
    void aBadRequestWhoseOnErrorThrowsDoesNotMakeRequestThrow(Function<List<Throwable>, Reporting> make) {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (Reporting r = make.apply(reported)) {
            IllegalStateException boom = new IllegalStateException("onError broke");
            Throwing subscriber = new Throwing("onError", boom);
            CompletableFuture<String> never = new CompletableFuture<>();
            Io.with(r.io()).run(() -> Reactive.fromFuture(Future.from(never)).subscribe(subscriber));
            subscriber.subscription.request(0); // §3.9 onError, which throws: request still returns (§3.16)
            awaitReported(reported, boom);
            assertEquals(List.of("onSubscribe", "onError"), subscriber.signals);
        }
    }

    @Test
    void aFuturesSignalsDoNotRunInsideItsCompletion() throws InterruptedException {
        // the future's waiters are run newest first (WaiterStack is a stack): the subscriber's
        // delivery is due before the action registered earlier. If that order ever changes,
        // register the subscriber first and the latch action second to keep this test meaningful. Inside the
        // completion, an onNext that waits for that action
        // would wait for itself; delivered by a task of its own, it sees the action run.
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            CompletableFuture<String> source = new CompletableFuture<>();
            Future<String> future = Future.from(source);
            CountDownLatch laterAction = new CountDownLatch(1);
            future.onDone(laterAction::countDown);
            AtomicReference<Boolean> sawIt = new AtomicReference<>();
            CountDownLatch delivered = new CountDownLatch(1);
            Io.with(io)
                    .run(() -> Reactive.fromFuture(future).subscribe(new Subscriber<String>() {
                        @Override
                        public void onSubscribe(Subscription s) {
                            s.request(1);
                        }

                        @Override
                        public void onNext(String item) {
                            try {
                                sawIt.set(laterAction.await(5, TimeUnit.SECONDS));
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            delivered.countDown();
                        }

                        @Override
                        public void onError(Throwable t) {}

                        @Override
                        public void onComplete() {}
                    }));
            source.complete("v");
            assertTrue(delivered.await(20, TimeUnit.SECONDS));
            assertTrue(sawIt.get(), "onNext ran inside the future's completion, ahead of its other waiters");
        }
    }

    // ------------------------------------------------------------ produce

    @ParameterizedTest
    @MethodSource("ios")
    void anOnNextThatThrowsIsReportedEvenIfTheProducerSwallowsIt(Function<List<Throwable>, Reporting> make) {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (Reporting r = make.apply(reported)) {
            IllegalStateException boom = new IllegalStateException("onNext broke");
            AtomicReference<Throwable> producerSaw = new AtomicReference<>();
            Throwing subscriber = new Throwing("onNext", boom);
            WeftPublisher<Integer> publisher = Io.with(r.io())
                    .call(() -> Reactive.produce(emitter -> {
                        try {
                            emitter.emit(1);
                        } catch (RuntimeException e) {
                            producerSaw.set(e); // and carries on as if nothing happened
                        }
                    }));
            publisher.subscribe(subscriber);
            subscriber.subscription.request(5);
            awaitReported(reported, boom);
            await().atMost(Duration.ofSeconds(20)).until(() -> producerSaw.get() != null);
            assertSame(boom, producerSaw.get(), "the producer learns why");
            assertEquals(List.of("onSubscribe", "onNext"), subscriber.signals, "cancelled: no terminal signal");
        }
    }

    @ParameterizedTest
    @MethodSource("ios")
    void anOnCompleteOrOnErrorThatThrowsIsReported(Function<List<Throwable>, Reporting> make) {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (Reporting r = make.apply(reported)) {
            IllegalStateException completeBroke = new IllegalStateException("onComplete broke");
            Throwing completing = new Throwing("onComplete", completeBroke);
            Io.with(r.io()).call(() -> Reactive.produce(emitter -> {})).subscribe(completing);
            awaitReported(reported, completeBroke);
            reported.clear();
            IllegalStateException errorBroke = new IllegalStateException("onError broke");
            Throwing failing = new Throwing("onError", errorBroke);
            Io.with(r.io())
                    .call(() -> Reactive.produce(emitter -> {
                        throw new IllegalArgumentException("the producer failed");
                    }))
                    .subscribe(failing);
            awaitReported(reported, errorBroke);
        }
    }

    /**
     * A producer that failed after its subscriber cancelled (its cleanup threw) used to lose that
     * failure: no signal carries it after a cancel, and it was not reported either.
     */
    @ParameterizedTest
    @MethodSource("ios")
    void aProducersFailureAfterTheSubscriberCancelledIsReported(Function<List<Throwable>, Reporting> make) {
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        try (Reporting r = make.apply(reported)) {
            IllegalStateException cleanup = new IllegalStateException("the producer's cleanup failed");
            WeftPublisher<Integer> publisher = Io.with(r.io())
                    .call(() -> Reactive.produce(emitter -> {
                        try {
                            emitter.emit(1);
                            emitter.emit(2);
                        } catch (Cancelled cancelled) {
                            throw cleanup;
                        }
                    }));
            List<String> signals = new CopyOnWriteArrayList<>();
            publisher.subscribe(cancellingInOnNext(signals, false));
            awaitReported(reported, cleanup);
            assertEquals(List.of("onSubscribe", "onNext"), signals);
        }
    }

    /**
     * A cancel inside onNext right after a bad request used to be overtaken by the bad request's
     * onError, although a cancel made inside a signal is seen by the very next one.
     */
    @Test
    void aCancelAfterABadRequestInsideOnNextStopsItsOnError() {
        List<String> signals = new CopyOnWriteArrayList<>();
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            WeftPublisher<Integer> publisher = Io.with(io)
                    .call(() -> Reactive.produce(emitter -> {
                        emitter.emit(1);
                        emitter.emit(2);
                    }));
            publisher.subscribe(cancellingInOnNext(signals, true));
            await().atMost(Duration.ofSeconds(20)).until(() -> signals.contains("onNext"));
        } // the close waits for the producer task, which sends any terminal signal
        assertEquals(List.of("onSubscribe", "onNext"), signals);
    }

    /** Requests one item, and cancels in onNext (after a request(0), if {@code badRequestFirst}); records the signals. */
    private static Subscriber<Integer> cancellingInOnNext(List<String> signals, boolean badRequestFirst) {
        return new Subscriber<>() {
            private Subscription subscription;

            @Override
            public void onSubscribe(Subscription s) {
                signals.add("onSubscribe");
                subscription = s;
                s.request(1);
            }

            @Override
            public void onNext(Integer item) {
                signals.add("onNext");
                if (badRequestFirst) {
                    subscription.request(0);
                }
                subscription.cancel();
            }

            @Override
            public void onError(Throwable t) {
                signals.add("onError " + t);
            }

            @Override
            public void onComplete() {
                signals.add("onComplete");
            }
        };
    }

    @Test
    void theProducerWaitsForAStrayEmitWithoutSpinning() {
        // one worker, a virtual clock: the producer returns while a task it spawned is inside
        // onNext, sleeping. A finisher that spins (yields) keeps the only worker busy, so the
        // clock never moves and the sleep never ends; one that parks lets it
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Channel<String> inOnNext = Channel.bounded(1);
            AtomicReference<Future<Object>> stray = new AtomicReference<>();
            WeftPublisher<Integer> publisher = Io.with(io)
                    .call(() -> Reactive.produce(emitter -> {
                        stray.set(Io.async(() -> {
                            emitter.emit(1);
                            return null;
                        }));
                        inOnNext.receive(); // the stray emit is inside onNext: return now
                    }));
            Recorder<Integer> recorder = Recorder.manual();
            List<String> order = new CopyOnWriteArrayList<>();
            publisher.subscribe(new Subscriber<Integer>() {
                @Override
                public void onSubscribe(Subscription s) {
                    recorder.onSubscribe(s);
                    recorder.request(1);
                }

                @Override
                public void onNext(Integer item) {
                    inOnNext.send("in onNext");
                    Io.sleep(Duration.ofMillis(10));
                    order.add("onNext returns at " + Io.current().nowMs());
                    recorder.onNext(item);
                }

                @Override
                public void onError(Throwable t) {
                    recorder.onError(t);
                }

                @Override
                public void onComplete() {
                    order.add("onComplete");
                    recorder.onComplete();
                }
            });
            recorder.awaitTerminal();
            assertTrue(recorder.completed());
            assertEquals(
                    List.of("onNext returns at 10", "onComplete"), order, "the terminal signal never overlaps onNext");
            assertEquals(List.of(), recorder.violations());
        }
    }

    // ------------------------------------------------------------ Inbox

    /** A publisher driven by the test: records the calls the subscriber makes on its subscription. */
    static final class Manual implements org.reactivestreams.Publisher<Integer> {
        final List<String> calls = new CopyOnWriteArrayList<>();
        volatile Subscriber<? super Integer> subscriber;

        @Override
        public void subscribe(Subscriber<? super Integer> s) {
            subscriber = s;
            s.onSubscribe(new Subscription() {
                @Override
                public void request(long n) {
                    calls.add("request " + n);
                }

                @Override
                public void cancel() {
                    calls.add("cancel");
                }
            });
        }
    }

    @Test
    void anInboxAsksNothingOfTheSubscriptionAfterOnComplete() {
        Manual publisher = new Manual();
        Inbox<Integer> inbox = Inbox.withPrefetch(4);
        publisher.subscribe(inbox);
        assertEquals(List.of("request 4"), publisher.calls);
        for (int i = 0; i < 4; i++) {
            publisher.subscriber.onNext(i);
        }
        publisher.subscriber.onComplete();
        List<Integer> drained = new java.util.ArrayList<>();
        inbox.forEach(drained::add); // receiving past the replenish limit
        inbox.close();
        assertEquals(List.of(0, 1, 2, 3), drained);
        assertEquals(List.of("request 4"), publisher.calls, "§2.4: the subscription is over after onComplete");
    }

    @Test
    void anInboxAsksNothingOfTheSubscriptionAfterOnError() {
        Manual publisher = new Manual();
        Inbox<Integer> inbox = Inbox.withPrefetch(4);
        publisher.subscribe(inbox);
        for (int i = 0; i < 4; i++) {
            publisher.subscriber.onNext(i);
        }
        IllegalArgumentException failed = new IllegalArgumentException("upstream failed");
        publisher.subscriber.onError(failed);
        for (int i = 0; i < 4; i++) {
            assertEquals(i, inbox.receive());
        }
        assertSame(failed, assertThrows(IllegalArgumentException.class, inbox::receive));
        inbox.close();
        assertEquals(List.of("request 4"), publisher.calls, "§2.4: the subscription is over after onError");
    }

    @Test
    void aFailureTheInboxFoundIsNotReplacedByALaterOnError() {
        Manual publisher = new Manual();
        Inbox<Integer> inbox = Inbox.withPrefetch(1);
        publisher.subscribe(inbox);
        publisher.subscriber.onNext(1);
        publisher.subscriber.onNext(2); // more than requested (§1.1): the inbox fails and cancels
        assertEquals(List.of("request 1", "cancel"), publisher.calls);
        IllegalArgumentException late = new IllegalArgumentException("the publisher's own error, after the cancel");
        publisher.subscriber.onError(late); // §2.4 allows it to arrive: it must not win
        assertEquals(1, inbox.receive()); // what was buffered before the failure still comes first
        IllegalStateException found = assertThrows(IllegalStateException.class, inbox::receive);
        assertTrue(found.getMessage().contains("§1.1"), found.getMessage());
        assertEquals(List.of("request 1", "cancel"), publisher.calls);
    }
}
