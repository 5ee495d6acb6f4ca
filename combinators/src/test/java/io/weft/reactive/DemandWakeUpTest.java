package io.weft.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.weft.Io;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The producer's park for demand against {@code request} from another thread, one item at a time
 * so that nearly every request meets a producer that is parking or parked: a lost wake-up (the
 * producer parks after the request looked for a waiter, and no one readies it) leaves the
 * producer parked with demand, and the round it happened in makes no progress: the test fails
 * naming it once the item is {@link #STUCK} late. Guards the Dekker pair in {@link ProducerRun}'s
 * implementation notes.
 *
 * <p>The wait for each item spins (it keeps the core; yielding it made rounds slower under load,
 * the next request waiting for the OS to give the core back). On a loaded machine a round can take
 * milliseconds (the woken worker waits for a core): the 20,000 rounds took over 30 seconds in a
 * build with two busy shells beside it, so the test has the default timeout (60 s), and a lost
 * wake-up is told apart from a slow machine by the round that makes no progress.
 */
class DemandWakeUpTest {
    private static final int ROUNDS = 20_000;
    /** How long one item may take before its round counts as a lost wake-up. */
    private static final Duration STUCK = Duration.ofSeconds(20);

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void everyRequestWakesTheParkedProducer(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Recorder<Integer> recorder = Recorder.manual();
            Io.with(opened.io())
                    .call(() -> Reactive.<Integer>produce(emitter -> {
                        for (int i = 0; ; i++) {
                            emitter.emit(i);
                        }
                    }))
                    .subscribe(recorder);
            for (int i = 1; i <= ROUNDS; i++) {
                recorder.request(1);
                awaitItem(recorder, i); // the item must come: the request readied the producer
            }
            recorder.cancel();
            assertEquals(ROUNDS, recorder.count());
            assertEquals(List.of(), recorder.violations());
        }
    }

    /** Waits until {@code recorder} has {@code count} items; fails if it is {@link #STUCK} late. */
    private static void awaitItem(Recorder<Integer> recorder, int count) {
        long deadline = System.nanoTime() + STUCK.toNanos();
        for (int spins = 1; recorder.count() < count; spins++) {
            Thread.onSpinWait();
            if (spins % 1024 == 0 && System.nanoTime() - deadline > 0) {
                fail("round " + count + " of " + ROUNDS + ": no item " + STUCK.toSeconds() + " s"
                        + " after its request (a lost wake-up: the producer parked with demand)");
            }
        }
    }
}
