package io.weft.reactive;

import static io.weft.reactive.Recorder.awaitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Io;
import io.weft.channel.Channel;
import io.weft.testing.Ios;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.reactivestreams.Subscriber;

/**
 * {@link Reactive#produce} on every Io: backpressure by suspension, cancellation reaching the
 * producer's {@code finally}, terminal signals, and the spec details users hit (§1.9, §2.13, §3.3,
 * §3.9, §3.17). The subscriber is a {@link Recorder} driven from the test thread, which is exactly
 * the case that would deadlock if an inline Io ran the producer on the subscriber's thread.
 */
class ProducePublisherTest {

    /** A producer of 0, 1, 2, ... up to {@code count} items that counts its emits and its finally. */
    private static final class Counting implements Producer<Long> {
        final long count;
        final AtomicInteger emitted = new AtomicInteger();
        final CountDownLatch finallyRan = new CountDownLatch(1);

        Counting(long count) {
            this.count = count;
        }

        @Override
        public void produce(Emitter<Long> emitter) {
            try {
                for (long i = 0; i < count; i++) {
                    emitter.emit(i);
                    emitted.incrementAndGet();
                }
            } finally {
                finallyRan.countDown();
            }
        }

        boolean finished() {
            return finallyRan.getCount() == 0;
        }
    }

    private static <T> WeftPublisher<T> produceOn(Ios.Opened opened, Producer<T> producer) {
        return Io.with(opened.io()).call(() -> Reactive.produce(producer));
    }

    private static void assertClean(Recorder<?> recorder) {
        assertEquals(List.of(), recorder.violations());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void deliversEveryItemInOrderThenCompletes(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Counting producer = new Counting(100);
            Recorder<Long> recorder = Recorder.manual();
            produceOn(opened, producer).subscribe(recorder);
            recorder.request(1000);
            recorder.awaitTerminal();
            assertEquals(LongStream.range(0, 100).boxed().toList(), recorder.items());
            assertTrue(recorder.completed());
            assertNull(recorder.error());
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void emitSuspendsUntilThereIsDemandAndNeverRunsAhead(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Counting producer = new Counting(Long.MAX_VALUE);
            Recorder<Long> recorder = Recorder.manual();
            produceOn(opened, producer).subscribe(recorder);
            for (int round = 1; round <= 5; round++) {
                recorder.request(3);
                int expected = 3 * round;
                recorder.awaitCount(expected);
                // the producer delivered exactly the demand and is now parked in its next emit
                assertEquals(expected, recorder.count());
                assertEquals(expected, producer.emitted.get());
            }
            recorder.cancel();
            awaitUntil(producer::finished);
            assertEquals(15, recorder.count());
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void cancelStopsTheProducerAtItsNextSuspendPointAndRunsItsFinally(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicReference<Throwable> seen = new AtomicReference<>();
            CountDownLatch finallyRan = new CountDownLatch(1);
            CountDownLatch sleeping = new CountDownLatch(1);
            Channel<String> never = Channel.bounded(1);
            Recorder<String> recorder = Recorder.manual();
            produceOn(opened, (Emitter<String> emitter) -> {
                        try {
                            emitter.emit("first");
                            sleeping.countDown();
                            never.receive(); // a suspend point that is not an emit (and no clock can end)
                        } catch (Throwable t) {
                            seen.set(t);
                            throw t;
                        } finally {
                            finallyRan.countDown();
                        }
                    })
                    .subscribe(recorder);
            recorder.request(5);
            recorder.awaitCount(1);
            awaitUntil(() -> sleeping.getCount() == 0);
            recorder.cancel();
            awaitUntil(() -> finallyRan.getCount() == 0);
            assertInstanceOf(Cancelled.class, seen.get());
            assertEquals(List.of("first"), recorder.items());
            assertFalse(recorder.completed());
            assertNull(recorder.error());
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void cancelInsideOnNextMeansNoFurtherSignal(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Counting producer = new Counting(Long.MAX_VALUE);
            AtomicInteger received = new AtomicInteger();
            AtomicReference<String> violation = new AtomicReference<>();
            produceOn(opened, producer).subscribe(new Subscriber<Long>() {
                private org.reactivestreams.Subscription s;

                @Override
                public void onSubscribe(org.reactivestreams.Subscription s) {
                    this.s = s;
                    s.request(Long.MAX_VALUE);
                }

                @Override
                public void onNext(Long item) {
                    if (received.incrementAndGet() == 10) {
                        s.cancel();
                    } else if (received.get() > 10) {
                        violation.set("onNext after cancel: " + item);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    violation.set("onError after cancel: " + t);
                }

                @Override
                public void onComplete() {
                    violation.set("onComplete after cancel");
                }
            });
            awaitUntil(producer::finished);
            assertEquals(10, received.get());
            assertNull(violation.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFailingProducerSignalsOnErrorWithoutDemand(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            IllegalStateException boom = new IllegalStateException("boom");
            Recorder<String> recorder = Recorder.manual();
            produceOn(opened, (Emitter<String> emitter) -> {
                        throw boom;
                    })
                    .subscribe(recorder);
            recorder.awaitTerminal();
            assertSame(boom, recorder.error());
            assertEquals(0, recorder.count());
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void anEmptyProducerCompletesWithoutDemand(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Recorder<String> recorder = Recorder.manual();
            produceOn(opened, (Emitter<String> emitter) -> {}).subscribe(recorder);
            recorder.awaitTerminal();
            assertTrue(recorder.completed());
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void nonPositiveRequestSignalsIllegalArgumentAndStopsTheProducer(Ios.Kind kind) {
        for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
            try (Ios.Opened opened = Ios.open(kind)) {
                Counting producer = new Counting(Long.MAX_VALUE);
                Recorder<Long> recorder = Recorder.manual();
                produceOn(opened, producer).subscribe(recorder);
                recorder.request(2);
                recorder.awaitCount(2);
                recorder.requestInvalid(bad);
                recorder.awaitTerminal();
                assertInstanceOf(IllegalArgumentException.class, recorder.error(), "request(" + bad + ")");
                assertTrue(
                        recorder.error().getMessage().contains("3.9"),
                        recorder.error().getMessage());
                awaitUntil(producer::finished);
                assertEquals(2, recorder.count());
                assertClean(recorder);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void demandAddsUpAndSaturatesAtLongMaxValue(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Counting producer = new Counting(50);
            Recorder<Long> recorder = Recorder.manual();
            produceOn(opened, producer).subscribe(recorder);
            recorder.request(Long.MAX_VALUE - 1);
            recorder.request(Long.MAX_VALUE); // would overflow: saturates, no error (§3.17)
            recorder.request(7);
            recorder.awaitTerminal();
            assertTrue(recorder.completed());
            assertEquals(50, recorder.count());
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void requestInsideOnNextDoesNotRecurse(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Recorder<Long> recorder = Recorder.requestingInOnNext(1);
            produceOn(opened, new Counting(10_000)).subscribe(recorder);
            recorder.awaitTerminal();
            assertTrue(recorder.completed());
            assertEquals(10_000, recorder.count());
            assertEquals(1, recorder.maxOnNextDepth()); // §3.3: onNext never nests
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void eachSubscriberGetsItsOwnProducerRun(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicInteger runs = new AtomicInteger();
            WeftPublisher<Integer> publisher = produceOn(opened, (Emitter<Integer> emitter) -> {
                int run = runs.incrementAndGet();
                emitter.emit(run);
                emitter.emit(run);
            });
            Recorder<Integer> a = Recorder.manual();
            Recorder<Integer> b = Recorder.manual();
            publisher.subscribe(a);
            publisher.asFlow().subscribe(b);
            a.request(10);
            b.request(10);
            a.awaitTerminal();
            b.awaitTerminal();
            assertEquals(2, runs.get());
            assertEquals(2, a.count());
            assertEquals(2, b.count());
            assertTrue(a.items().get(0) != b.items().get(0));
            assertClean(a);
            assertClean(b);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void emitterMisuseIsRefusedClearly(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicReference<Emitter<String>> leaked = new AtomicReference<>();
            AtomicReference<Throwable> nullEmit = new AtomicReference<>();
            Recorder<String> recorder = Recorder.manual();
            produceOn(opened, (Emitter<String> emitter) -> {
                        leaked.set(emitter);
                        try {
                            emitter.emit(null);
                        } catch (NullPointerException e) {
                            nullEmit.set(e);
                        }
                    })
                    .subscribe(recorder);
            recorder.request(1);
            recorder.awaitTerminal();
            assertInstanceOf(NullPointerException.class, nullEmit.get());
            IllegalStateException late =
                    assertThrows(IllegalStateException.class, () -> leaked.get().emit("late"));
            assertTrue(late.getMessage().contains("after the producer returned"), late.getMessage());
            assertEquals(0, recorder.count());
            assertClean(recorder);
        }
    }

    @Test
    void subscribeNullIsRefusedWithNullPointerException() {
        WeftPublisher<String> publisher = Reactive.produce(emitter -> {});
        assertThrows(NullPointerException.class, () -> publisher.subscribe((Subscriber<String>) null));
        assertThrows(NullPointerException.class, () -> publisher.asFlow().subscribe((Flow.Subscriber<String>) null));
        assertThrows(NullPointerException.class, () -> Reactive.produce(null));
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aFlowSubscriberSeesTheSameBehaviour(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Counting producer = new Counting(Long.MAX_VALUE);
            Recorder<Long> recorder = Recorder.manual();
            Flow.Publisher<Long> flow = Io.with(opened.io()).call(() -> Flows.produce(producer));
            flow.subscribe(recorder);
            recorder.request(4);
            recorder.awaitCount(4);
            recorder.requestInvalid(0);
            recorder.awaitTerminal();
            assertInstanceOf(IllegalArgumentException.class, recorder.error());
            awaitUntil(producer::finished);
            assertEquals(4, recorder.count());
            assertClean(recorder);
        }
    }

    @Test
    void underAnInlineIoTheProducerNeverRunsOnTheSubscribersThread() {
        try (Ios.Opened opened = Ios.open(Ios.all().findFirst().orElseThrow().getPayload())) {
            assertTrue(opened.kind().inline());
            Thread subscriber = Thread.currentThread();
            AtomicReference<Thread> producerThread = new AtomicReference<>();
            Recorder<String> recorder = Recorder.manual();
            produceOn(opened, (Emitter<String> emitter) -> {
                        producerThread.set(Thread.currentThread());
                        emitter.emit("a");
                        emitter.emit("b");
                    })
                    .subscribe(recorder);
            recorder.request(1); // returns at once although the producer then waits for demand
            recorder.awaitCount(1);
            recorder.request(1);
            recorder.awaitTerminal();
            assertEquals(List.of("a", "b"), recorder.items());
            assertTrue(producerThread.get() != subscriber);
            assertTrue(producerThread.get().isVirtual());
            assertClean(recorder);
        }
    }
}
