package io.weft.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.weft.Io;
import io.weft.testing.Ios;
import java.util.List;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The producer's park for demand against {@code request} from another thread, one item at a time
 * so that nearly every request meets a producer that is parking or parked: a lost wake-up (the
 * producer parks after the request looked for a waiter, and no one readies it) leaves the
 * producer parked with demand and this test hangs until its timeout. Guards the Dekker pair in
 * {@link ProducerRun}'s implementation notes.
 */
class DemandWakeUpTest {
    private static final int ROUNDS = 20_000;

    @Timeout(30)
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
                while (recorder.count() < i) {
                    Thread.onSpinWait(); // the item must come: the request readied the producer
                }
            }
            recorder.cancel();
            assertEquals(ROUNDS, recorder.count());
            assertEquals(List.of(), recorder.violations());
        }
    }
}
