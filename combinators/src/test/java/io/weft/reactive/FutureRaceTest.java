package io.weft.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * {@link Reactive#fromFuture}'s one CAS against itself: the future completing (onDone) races the
 * subscriber's request, and a cancel races the delivery. Whoever comes second must deliver exactly once:
 * a miss leaves the subscriber waiting forever, a double delivery shows up as a second onNext or a
 * signal after onComplete (the Recorder's violations). No Io is involved: the future completes on
 * a plain thread.
 */
class FutureRaceTest {
    private static final int ROUNDS = 2_000;

    @Test
    void completionAndRequestRaceToOneDelivery() throws InterruptedException {
        for (int round = 0; round < ROUNDS; round++) {
            CompletableFuture<Integer> stage = new CompletableFuture<>();
            Recorder<Integer> recorder = Recorder.manual();
            Reactive.fromFuture(Future.from(stage)).subscribe(recorder);
            int value = round;
            race(() -> stage.complete(value), () -> recorder.request(1));
            assertTrue(recorder.completed(), "round " + round + ": both threads returned, so one delivered");
            assertEquals(List.of(round), recorder.items(), "round " + round);
            assertEquals(List.of(), recorder.violations(), "round " + round);
        }
    }

    @Test
    void aCancelRacingTheDeliveryStopsItWithinOneSignal() throws InterruptedException {
        for (int round = 0; round < ROUNDS; round++) {
            CompletableFuture<Integer> stage = new CompletableFuture<>();
            Recorder<Integer> recorder = Recorder.manual();
            Reactive.fromFuture(Future.from(stage)).subscribe(recorder);
            recorder.request(1);
            race(() -> stage.complete(7), recorder::cancel);
            // the item at most once; completion only with the item; never an error; and after
            // cancel() returned at most the one signal that was already under way
            List<Integer> items = recorder.items();
            assertTrue(items.equals(List.of()) || items.equals(List.of(7)), "round " + round + ": " + items);
            assertTrue(!recorder.completed() || items.equals(List.of(7)), "round " + round);
            assertNull(recorder.error(), "round " + round);
            assertTrue(recorder.signalsAfterCancel() <= 1, "round " + round);
            assertEquals(List.of(), recorder.violations(), "round " + round);
        }
    }

    /** Runs {@code a} and {@code b} on two threads released together, and waits for both. */
    private static void race(Runnable a, Runnable b) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        Thread first = Thread.ofPlatform().start(() -> awaitThen(go, a));
        Thread second = Thread.ofPlatform().start(() -> awaitThen(go, b));
        go.countDown();
        first.join();
        second.join();
    }

    private static void awaitThen(CountDownLatch go, Runnable action) {
        try {
            go.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        action.run();
    }
}
