package io.weft.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.channel.Channel;
import io.weft.fiber.FiberIo;
import io.weft.testing.Ios;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Reactive#fromFuture} and {@link Reactive#fromChannel}. */
class FutureAndChannelPublisherTest {

    private static void assertClean(Recorder<?> recorder) {
        assertEquals(List.of(), recorder.violations());
    }

    // ---------------------------------------------------------------- fromFuture

    @Test
    void aValueWaitsForDemandThenCompletes() {
        Recorder<String> recorder = Recorder.manual();
        Reactive.fromFuture(Future.completed("v")).subscribe(recorder);
        assertEquals(0, recorder.count());
        assertFalse(recorder.completed());
        recorder.request(1);
        assertEquals(List.of("v"), recorder.items());
        assertTrue(recorder.completed());
        assertClean(recorder);
    }

    @Test
    void aNullValueIsAnEmptyStreamAndNeedsNoDemand() {
        Recorder<String> recorder = Recorder.manual();
        Reactive.<String>fromFuture(Future.completed(null)).subscribe(recorder);
        assertTrue(recorder.completed());
        assertEquals(0, recorder.count());
        assertClean(recorder);
    }

    @Test
    void aFailureIsSignalledWithoutDemand() {
        IllegalStateException boom = new IllegalStateException("boom");
        Recorder<String> recorder = Recorder.manual();
        Reactive.<String>fromFuture(Future.failed(boom)).subscribe(recorder);
        assertSame(boom, recorder.error());
        assertClean(recorder);
    }

    @Test
    void aCancelledFutureIsSignalledAsCancelled() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Future<String> future = Future.from(stage);
        future.cancel();
        Recorder<String> recorder = Recorder.manual();
        Reactive.fromFuture(future).subscribe(recorder);
        assertInstanceOf(Cancelled.class, recorder.error());
        assertClean(recorder);
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void aPendingFutureIsDeliveredWhenItCompletesAndEverySubscriberGetsIt(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Channel<String> gate = Channel.bounded(1);
            Future<String> pending = Io.with(opened.io()).call(() -> Io.async(gate::receive));
            WeftPublisher<String> publisher = Reactive.fromFuture(pending);
            Recorder<String> first = Recorder.manual();
            Recorder<String> second = Recorder.manual();
            publisher.subscribe(first);
            publisher.asFlow().subscribe(second);
            first.request(5);
            gate.trySend("late");
            first.awaitTerminal();
            assertEquals(List.of("late"), first.items());
            assertFalse(second.completed()); // no demand yet
            second.request(1);
            second.awaitTerminal();
            assertEquals(List.of("late"), second.items());
            assertClean(first);
            assertClean(second);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void aFutureThatCompletesAfterThePublishersIoClosedIsStillDelivered(Ios.Kind kind) {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Recorder<String> recorder = Recorder.manual();
        try (Ios.Opened opened = Ios.open(kind)) {
            WeftPublisher<String> publisher = Io.with(opened.io()).call(() -> Reactive.fromFuture(Future.from(stage)));
            publisher.subscribe(recorder);
            recorder.request(1);
        } // the publisher's Io is closed: it takes no delivery task any more
        stage.complete("late");
        // Delivered on the completing thread instead, since the Io refused the hand-off.
        assertEquals(List.of("late"), recorder.items());
        assertTrue(recorder.completed());
        assertClean(recorder);
    }

    /**
     * The delivery task is queued on a one-worker FiberIo whose worker is busy, and the Io closes
     * before running it: the close cancels the delivery, and the cancel delivers (on the closing
     * thread) rather than dropping the signal.
     */
    @Test
    void aDeliveryTheClosingIoCancelsBeforeRunningItIsStillDelivered() throws InterruptedException {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Recorder<String> recorder = Recorder.manual();
        CountDownLatch spinning = new CountDownLatch(1);
        try (FiberIo io = FiberIo.builder().workers(1).build()) {
            // (Io.with(io).call runs a root task on the Io: done before the worker is taken)
            WeftPublisher<String> publisher = Io.with(io).call(() -> Reactive.fromFuture(Future.from(stage)));
            publisher.subscribe(recorder);
            recorder.request(1);
            Io.with(io)
                    .run(() -> Io.launch(() -> {
                        spinning.countDown();
                        while (true) { // holds the only worker until the close cancels it
                            Io.checkpoint();
                            Thread.onSpinWait();
                        }
                    }));
            spinning.await();
            stage.complete("queued"); // the delivery task waits behind the spinner
            assertEquals(0, recorder.count(), "not delivered while the worker is busy");
        } // the close cancels the spinner and every task that has not started
        assertEquals(List.of("queued"), recorder.items());
        assertTrue(recorder.completed());
        assertClean(recorder);
    }

    @Test
    void cancellingTheSubscriptionLeavesTheFutureAlone() {
        CompletableFuture<String> stage = new CompletableFuture<>();
        Future<String> future = Future.from(stage);
        Recorder<String> recorder = Recorder.manual();
        Reactive.fromFuture(future).subscribe(recorder);
        recorder.request(1);
        recorder.cancel();
        stage.complete("after");
        assertEquals(Future.State.SUCCESS, future.state());
        assertEquals(0, recorder.count());
        assertFalse(recorder.completed());
        assertClean(recorder);
    }

    @Test
    void nonPositiveRequestSignalsIllegalArgument() {
        Recorder<String> recorder = Recorder.manual();
        Reactive.fromFuture(Future.from(new CompletableFuture<String>())).subscribe(recorder);
        recorder.requestInvalid(0);
        assertInstanceOf(IllegalArgumentException.class, recorder.error());
        assertClean(recorder);
    }

    // ---------------------------------------------------------------- fromChannel

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aChannelIsPublishedUntilClosedAndDrained(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Channel<Integer> channel = Channel.bounded(8);
            for (int i = 0; i < 5; i++) {
                channel.trySend(i);
            }
            channel.close();
            Recorder<Integer> recorder = Recorder.manual();
            Io.with(opened.io()).call(() -> Reactive.fromChannel(channel)).subscribe(recorder);
            recorder.request(2);
            recorder.awaitCount(2);
            assertEquals(List.of(0, 1), recorder.items());
            recorder.request(10);
            recorder.awaitTerminal();
            assertEquals(List.of(0, 1, 2, 3, 4), recorder.items());
            assertTrue(recorder.completed());
            assertClean(recorder);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aChannelIsReadOnlyOnDemandSoCancelLeavesTheRestInIt(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Channel<Integer> channel = Channel.bounded(8);
            for (int i = 0; i < 6; i++) {
                channel.trySend(i);
            }
            List<Integer> undelivered = new CopyOnWriteArrayList<>();
            Recorder<Integer> recorder = Recorder.manual();
            Io.with(opened.io())
                    .call(() -> Reactive.fromChannel(channel, undelivered::add))
                    .subscribe(recorder);
            recorder.request(2);
            recorder.awaitCount(2);
            recorder.cancel();
            // with no demand left the producer waits for demand before receiving, so the rest
            // is still in the channel, in order, and nothing was received and then dropped
            List<Integer> rest = new java.util.ArrayList<>();
            for (Integer item = channel.tryReceive(); item != null; item = channel.tryReceive()) {
                rest.add(item);
            }
            assertEquals(List.of(2, 3, 4, 5), rest);
            assertEquals(List.of(), undelivered);
            assertEquals(List.of(0, 1), recorder.items());
            assertNull(recorder.error());
            assertFalse(channel.isClosed());
            assertClean(recorder);
        }
    }
}
