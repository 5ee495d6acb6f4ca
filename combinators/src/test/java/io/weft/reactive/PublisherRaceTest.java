package io.weft.reactive;

import static io.weft.reactive.Recorder.awaitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Io;
import io.weft.channel.Channel;
import io.weft.testing.Ios;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * request ‖ cancel ‖ emit, raced from three threads many times: demand is never exceeded, nothing
 * is signalled after cancel (beyond the one onNext the producer may already have begun), the
 * producer's {@code finally} always runs, and a channel's items are never lost or duplicated
 * (each is delivered, handed to the undelivered hook, or still in the channel). A short run is
 * part of the default tests; the {@code stress} tag runs it long ({@code mvn -Pstress ...}).
 */
class PublisherRaceTest {

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void producerRacesShort(Ios.Kind kind) throws InterruptedException {
        producerRaces(kind, 200);
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void channelRacesShort(Ios.Kind kind) throws InterruptedException {
        channelRaces(kind, 200);
    }

    @Tag("stress")
    @Timeout(600)
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void producerRacesLong(Ios.Kind kind) throws InterruptedException {
        producerRaces(kind, 20_000);
    }

    @Tag("stress")
    @Timeout(600)
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void channelRacesLong(Ios.Kind kind) throws InterruptedException {
        channelRaces(kind, 20_000);
    }

    private static void producerRaces(Ios.Kind kind, int rounds) throws InterruptedException {
        try (Ios.Opened opened = Ios.open(kind)) {
            for (int round = 0; round < rounds; round++) {
                CountDownLatch finallyRan = new CountDownLatch(1);
                AtomicBoolean started = new AtomicBoolean();
                WeftPublisher<Integer> publisher = Io.with(opened.io())
                        .call(() -> Reactive.produce(emitter -> {
                            started.set(true);
                            try {
                                for (int i = 0; ; i++) {
                                    emitter.emit(i);
                                }
                            } finally {
                                finallyRan.countDown();
                            }
                        }));
                Recorder<Integer> recorder = Recorder.manual();
                publisher.subscribe(recorder);
                race(recorder);
                // a cancel that lands before the producer task starts means it never runs (as any
                // task cancelled before it starts); once it started, its finally must run
                ProducerRun<?> run = (ProducerRun<?>) recorder.subscription();
                awaitUntil(run::ended);
                if (started.get()) {
                    awaitUntil(() -> finallyRan.getCount() == 0);
                }
                check(recorder, round);
            }
        }
    }

    private static void channelRaces(Ios.Kind kind, int rounds) throws InterruptedException {
        try (Ios.Opened opened = Ios.open(kind)) {
            for (int round = 0; round < rounds; round++) {
                int total = 64;
                Channel<Integer> channel = Channel.bounded(total);
                for (int i = 0; i < total; i++) {
                    channel.trySend(i);
                }
                List<Integer> undelivered = new CopyOnWriteArrayList<>();
                WeftPublisher<Integer> publisher =
                        Io.with(opened.io()).call(() -> Reactive.fromChannel(channel, undelivered::add));
                Recorder<Integer> recorder = Recorder.manual();
                publisher.subscribe(recorder);
                race(recorder);
                // After the cancel the producer may still hold one received item, which it hands
                // to the hook when its emit is refused; once every item is accounted for, stop.
                List<Integer> left = new ArrayList<>();
                awaitUntil(() -> {
                    for (Integer item = channel.tryReceive(); item != null; item = channel.tryReceive()) {
                        left.add(item);
                    }
                    return recorder.count() + undelivered.size() + left.size() >= total;
                });
                check(recorder, round);
                List<Integer> all = new ArrayList<>(recorder.items());
                all.addAll(undelivered);
                all.addAll(left);
                assertEquals(total, all.size(), "round " + round + ": " + all);
                assertEquals(total, new HashSet<>(all).size(), "round " + round + ": duplicates in " + all);
            }
        }
    }

    /** Requests from one thread while another cancels at a random moment; the producer emits. */
    private static void race(Recorder<Integer> recorder) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int requests = random.nextInt(1, 20);
        int cancelAfterSpins = random.nextInt(0, 2_000);
        Thread requester = Thread.ofPlatform().start(() -> {
            awaitGo(go);
            for (int i = 0; i < requests; i++) {
                recorder.request(ThreadLocalRandom.current().nextInt(1, 4));
            }
        });
        Thread canceller = Thread.ofPlatform().start(() -> {
            awaitGo(go);
            for (int i = 0; i < cancelAfterSpins; i++) {
                Thread.onSpinWait();
            }
            recorder.cancel();
        });
        go.countDown();
        requester.join();
        canceller.join();
    }

    private static void check(Recorder<Integer> recorder, int round) {
        assertEquals(List.of(), recorder.violations(), "round " + round);
        assertTrue(
                recorder.signalsAfterCancel() <= 1,
                "round " + round + ": " + recorder.signalsAfterCancel() + " signals began after cancel() returned");
        assertNull(recorder.error(), "round " + round);
        List<Integer> items = recorder.items();
        for (int i = 0; i < items.size(); i++) {
            assertEquals(i, items.get(i), "round " + round + ": out of order");
        }
    }

    private static void awaitGo(CountDownLatch go) {
        try {
            go.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
