package io.weft.reactive;

import static io.weft.reactive.Recorder.awaitUntil;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.channel.ChannelClosed;
import io.weft.testing.Ios;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/** The Publisher-to-Weft direction: {@link Inbox}, {@link Reactive#subscribe} and the await helpers. */
class InboxTest {

    private static <T> T onIo(Ios.Opened opened, java.util.concurrent.Callable<T> body) {
        return opened.call(body);
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aWeftProducerStreamsIntoAWeftConsumer(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Integer> received = onIo(opened, () -> {
                WeftPublisher<Integer> numbers = Reactive.produce(emitter -> {
                    for (int i = 0; i < 10_000; i++) {
                        emitter.emit(i);
                    }
                });
                return Reactive.collect(numbers);
            });
            assertEquals(IntStream.range(0, 10_000).boxed().toList(), received);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void prefetchBoundsWhatIsRequestedAhead(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Long> requests = new CopyOnWriteArrayList<>();
            AtomicLong requested = new AtomicLong();
            AtomicLong sent = new AtomicLong();
            AtomicLong worstAhead = new AtomicLong();
            Flux<Integer> source = Flux.range(0, 1_000)
                    .doOnRequest(n -> {
                        requests.add(n);
                        requested.addAndGet(n);
                    })
                    .doOnNext(x -> sent.incrementAndGet());
            int count = onIo(opened, () -> {
                int n = 0;
                try (Inbox<Integer> inbox = Reactive.subscribe(source, 16)) {
                    for (int item : inbox) {
                        assertEquals(n++, item);
                        // requested but not yet received: buffered or in flight
                        worstAhead.accumulateAndGet(requested.get() - n, Math::max);
                    }
                }
                return n;
            });
            assertEquals(1_000, count);
            assertEquals(16L, requests.get(0));
            assertTrue(requests.stream().skip(1).allMatch(n -> n == 12), requests.toString());
            assertTrue(worstAhead.get() <= 16, "requested ahead: " + worstAhead.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void itemsBeforeAFailureAreReceivedThenTheFailureIsThrown(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            IllegalStateException boom = new IllegalStateException("boom");
            List<Integer> before = new ArrayList<>();
            RuntimeException thrown = onIo(opened, () -> {
                try (Inbox<Integer> inbox = Reactive.subscribe(Flux.concat(Flux.just(1, 2), Flux.error(boom)), 4)) {
                    for (int item : inbox) {
                        before.add(item);
                    }
                    return null;
                } catch (RuntimeException e) {
                    return e;
                }
            });
            assertSame(boom, thrown);
            assertEquals(List.of(1, 2), before);
        }
    }

    @Test
    void aCheckedFailureIsWrappedAsFutureAwaitDoes() {
        IOException io = new IOException("disk");
        CompletionException thrown =
                assertThrows(CompletionException.class, () -> Reactive.awaitFirst(Flux.<String>error(io)));
        assertSame(io, thrown.getCause());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void awaitFirstCancelsAfterTheFirstItemAndAwaitLastDrains(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicBoolean cancelled = new AtomicBoolean();
            int first = onIo(
                    opened, () -> Reactive.awaitFirst(Flux.range(7, 1_000_000).doOnCancel(() -> cancelled.set(true))));
            assertEquals(7, first);
            assertTrue(cancelled.get());
            assertEquals(99, (int) onIo(opened, () -> Reactive.awaitLast(Flux.range(0, 100))));
            assertThrows(NoSuchElementException.class, () -> onIo(opened, () -> Reactive.awaitFirst(Flux.empty())));
            assertThrows(NoSuchElementException.class, () -> onIo(opened, () -> Reactive.awaitLast(Flux.empty())));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void cancellingTheConsumingTaskCancelsTheSubscription(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicBoolean cancelled = new AtomicBoolean();
            AtomicBoolean waiting = new AtomicBoolean();
            Future<Integer> consumer = Io.with(opened.io())
                    .call(() -> Io.async(() -> {
                        Inbox<Integer> inbox = Reactive.subscribe(
                                Flux.<Integer>never()
                                        .doOnRequest(n -> waiting.set(true))
                                        .doOnCancel(() -> cancelled.set(true)),
                                8);
                        return inbox.receive();
                    }));
            awaitUntil(waiting::get);
            consumer.cancel();
            assertThrows(Cancelled.class, consumer::await);
            awaitUntil(cancelled::get);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aSubscriptionEndsWithTheTaskThatOpenedIt(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicBoolean cancelled = new AtomicBoolean();
            int first = onIo(opened, () -> {
                Inbox<Integer> leftOpen =
                        Reactive.subscribe(Flux.range(0, 1_000).doOnCancel(() -> cancelled.set(true)), 4);
                return leftOpen.receive(); // returns without closing the inbox
            });
            assertEquals(0, first);
            awaitUntil(cancelled::get);
        }
    }

    @Test
    void closingDropsBufferedItemsAndEndsTheStream() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Inbox<Integer> inbox = Inbox.withPrefetch(8);
        Flux.range(0, 100).doOnCancel(() -> cancelled.set(true)).subscribe(inbox);
        assertEquals(0, inbox.receive());
        inbox.close();
        assertTrue(cancelled.get());
        assertTrue(inbox.isDone());
        assertThrows(ChannelClosed.class, inbox::receive);
        assertFalse(inbox.iterator().hasNext());
    }

    @Test
    void aSecondSubscriptionIsCancelled() {
        Inbox<Integer> inbox = Inbox.withPrefetch(2);
        AtomicInteger firstRequests = new AtomicInteger();
        AtomicBoolean secondCancelled = new AtomicBoolean();
        inbox.onSubscribe(subscription(n -> firstRequests.incrementAndGet(), () -> {}));
        inbox.onSubscribe(subscription(n -> {}, () -> secondCancelled.set(true)));
        assertEquals(1, firstRequests.get());
        assertTrue(secondCancelled.get()); // §2.5
    }

    @Test
    void aPublisherThatIgnoresDemandIsCancelledAndTheInboxFails() {
        AtomicBoolean cancelled = new AtomicBoolean();
        Publisher<Integer> rogue = (Subscriber<? super Integer> s) -> {
            s.onSubscribe(subscription(n -> {}, () -> cancelled.set(true)));
            for (int i = 0; i < 5; i++) {
                s.onNext(i); // more than the 2 requested
            }
        };
        Inbox<Integer> inbox = Inbox.withPrefetch(2);
        rogue.subscribe(inbox);
        assertTrue(cancelled.get());
        assertEquals(0, inbox.receive());
        assertEquals(1, inbox.receive());
        IllegalStateException broken = assertThrows(IllegalStateException.class, inbox::receive);
        assertTrue(broken.getMessage().contains("§1.1"), broken.getMessage());
    }

    /**
     * A Subscription whose request threw (§3.16 broken) escaped receive() after it had taken its
     * item, which was lost, and left the inbox's drain loop marked busy for good: no later
     * request or cancel went out, and close never cancelled the upstream. Now the item is
     * received, the stream fails after it, and the upstream is cancelled.
     */
    @Test
    void aSubscriptionWhoseRequestThrowsFailsTheStreamWithoutLosingTheItem() {
        AtomicInteger requests = new AtomicInteger();
        AtomicInteger cancels = new AtomicInteger();
        IllegalStateException thrownByRequest = new IllegalStateException("a broken request (test)");
        Publisher<String> broken = (Subscriber<? super String> s) -> s.onSubscribe(subscription(
                n -> {
                    if (requests.incrementAndGet() == 1) {
                        s.onNext("the only item");
                    } else {
                        throw thrownByRequest;
                    }
                },
                cancels::incrementAndGet));
        Inbox<String> inbox = Reactive.subscribe(broken, 1);
        assertEquals("the only item", inbox.receive());
        IllegalStateException failed = assertThrows(IllegalStateException.class, inbox::receive);
        assertSame(thrownByRequest, failed.getCause());
        assertEquals(1, cancels.get(), "the upstream was not cancelled");
        inbox.close();
        assertEquals(1, cancels.get());
    }

    /** awaitFirst asks for one item, not two: a cold publisher makes no item only to have it dropped. */
    @Test
    void awaitFirstRequestsOneItem() {
        List<Long> requested = new CopyOnWriteArrayList<>();
        AtomicInteger cancels = new AtomicInteger();
        Publisher<String> cold = (Subscriber<? super String> s) -> s.onSubscribe(subscription(
                n -> {
                    requested.add(n);
                    s.onNext("item " + requested.size());
                },
                cancels::incrementAndGet));
        assertEquals("item 1", Reactive.awaitFirst(cold));
        assertEquals(List.of(1L), requested);
        assertEquals(1, cancels.get());
    }

    @Test
    void nullSignalsAreRefused() {
        Inbox<Integer> inbox = Inbox.withPrefetch(2);
        assertThrows(NullPointerException.class, () -> inbox.onSubscribe((Subscription) null));
        inbox.onSubscribe(subscription(n -> {}, () -> {}));
        assertThrows(NullPointerException.class, () -> inbox.onNext(null));
        assertThrows(NullPointerException.class, () -> inbox.onError(null));
        assertThrows(IllegalArgumentException.class, () -> Inbox.withPrefetch(0));
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFlowPublisherIsConsumedTheSameWay(Ios.Kind kind) {
        SubmissionPublisher<Integer> feed = new SubmissionPublisher<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            Thread.ofVirtual().start(() -> {
                awaitUntil(() -> feed.getNumberOfSubscribers() == 1);
                for (int i = 0; i < 500; i++) {
                    feed.submit(i);
                }
                feed.close();
            });
            List<Integer> items = onIo(opened, () -> Flows.collect(feed));
            assertEquals(IntStream.range(0, 500).boxed().toList(), items);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aPublisherOnAnotherSchedulerIsConsumedInOrder(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Integer> items =
                    onIo(opened, () -> Reactive.collect(Flux.range(0, 5_000).publishOn(Schedulers.parallel(), 32)));
            assertEquals(IntStream.range(0, 5_000).boxed().toList(), items);
            assertDoesNotThrow(() -> items.add(5_000), "Reactive.collect returns a new mutable list");
            assertEquals(5_001, items.size());
        }
    }

    private static Subscription subscription(java.util.function.LongConsumer onRequest, Runnable onCancel) {
        return new Subscription() {
            @Override
            public void request(long n) {
                onRequest.accept(n);
            }

            @Override
            public void cancel() {
                onCancel.run();
            }
        };
    }
}
