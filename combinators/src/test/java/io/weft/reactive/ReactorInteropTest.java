package io.weft.reactive;

import static io.weft.reactive.Recorder.awaitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Weft's publishers under Reactor operators, and Reactor's publishers consumed by Weft tasks. */
class ReactorInteropTest {
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void fluxOperatorsOverAProducerAndTakeCancelsIt(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            CountDownLatch finallyRan = new CountDownLatch(1);
            WeftPublisher<Integer> naturals = Io.with(opened.io())
                    .call(() -> Reactive.produce(emitter -> {
                        try {
                            for (int i = 0; ; i++) {
                                emitter.emit(i);
                            }
                        } finally {
                            finallyRan.countDown();
                        }
                    }));
            List<Integer> evens = Flux.from(naturals)
                    .filter(i -> i % 2 == 0)
                    .map(i -> i * 10)
                    .take(5)
                    .collectList()
                    .block(PATIENCE);
            assertEquals(List.of(0, 20, 40, 60, 80), evens);
            awaitUntil(() -> finallyRan.getCount() == 0); // take(5) cancelled the producer task
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void publishOnBackpressureNeverLetsTheProducerRunAhead(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            AtomicLong requested = new AtomicLong();
            AtomicLong emitted = new AtomicLong();
            AtomicLong worstAhead = new AtomicLong(Long.MIN_VALUE);
            WeftPublisher<Integer> numbers = Io.with(opened.io())
                    .call(() -> Reactive.produce(emitter -> {
                        for (int i = 0; i < 2_000; i++) {
                            emitter.emit(i);
                            // after an emit returned, the subscriber had asked for at least this many
                            worstAhead.accumulateAndGet(emitted.incrementAndGet() - requested.get(), Math::max);
                        }
                    }));
            List<Integer> items = Flux.from(numbers)
                    .doOnRequest(n -> requested.accumulateAndGet(n, ProducerRun::saturatingAdd))
                    .publishOn(Schedulers.parallel(), 8)
                    .collectList()
                    .block(PATIENCE);
            assertEquals(IntStream.range(0, 2_000).boxed().toList(), items);
            assertTrue(worstAhead.get() <= 0, "the producer ran ahead of demand by " + worstAhead.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aProducerFailureReachesReactor(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            IllegalStateException boom = new IllegalStateException("boom");
            WeftPublisher<Integer> failing = Io.with(opened.io())
                    .call(() -> Reactive.produce(emitter -> {
                        emitter.emit(1);
                        throw boom;
                    }));
            AtomicReference<Throwable> seen = new AtomicReference<>();
            List<Integer> before = Flux.from(failing)
                    .onErrorResume(e -> {
                        seen.set(e);
                        return Mono.empty();
                    })
                    .collectList()
                    .block(PATIENCE);
            assertEquals(List.of(1), before);
            assertSame(boom, seen.get());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void aFutureBecomesAMono(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            Future<String> answer = Io.with(opened.io())
                    .call(() -> Io.async(() -> {
                        Io.sleep(Duration.ofMillis(5));
                        return "42";
                    }));
            assertEquals("42", Mono.from(Reactive.fromFuture(answer)).block(PATIENCE));
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void aRoundTripThroughReactorAndBack(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<String> out = opened.call(() -> {
                WeftPublisher<Integer> source = Reactive.produce(emitter -> {
                    for (int i = 0; i < 300; i++) {
                        emitter.emit(i);
                    }
                });
                Flux<String> mapped = Flux.from(source).map(i -> "#" + i).publishOn(Schedulers.boundedElastic(), 16);
                return Reactive.collect(mapped);
            });
            assertEquals(IntStream.range(0, 300).mapToObj(i -> "#" + i).toList(), out);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void reactorErrorsReachTheWeftConsumer(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            IllegalArgumentException bad = new IllegalArgumentException("bad");
            IllegalArgumentException thrown = assertThrows(
                    IllegalArgumentException.class,
                    () -> opened.call(() -> Reactive.collect(Flux.range(0, 10).concatWith(Flux.error(bad)))));
            assertSame(bad, thrown);
        }
    }
}
