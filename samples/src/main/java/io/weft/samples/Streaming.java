package io.weft.samples;

import io.weft.Future;
import io.weft.Io;
import io.weft.fiber.FiberIo;
import io.weft.reactive.Flows;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;

/**
 * Shows a producer task streamed into a {@link java.util.concurrent.Flow.Subscriber} with
 * backpressure by suspension: {@link io.weft.reactive.Emitter#emit} returns only when the
 * subscriber has asked for the item. Thread-safe: each run uses its own FiberIo.
 *
 * <p>The subscriber asks for two items at a time and takes 100 ms to process each pair before it
 * asks for two more. The producer could emit all six readings at once, but its printed times show
 * it paced by the subscriber: two emits per 100 ms, never more than two items requested and not
 * yet processed. (The subscriber's list of processing tasks is touched only by the one worker.) One worker and a virtual clock make the output the same every run.
 */
public final class Streaming {
    private Streaming() {}

    private static final int BATCH = 2;

    /**
     * Runs the stream of six readings, printing each step to {@code out}.
     *
     * @param out where to print
     * @return the readings the subscriber received, in order
     */
    public static List<String> run(PrintStream out) {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            return io.call(() -> stream(io, out));
        }
    }

    private static List<String> stream(Io io, PrintStream out) {
        Flow.Publisher<String> readings = Flows.produce(emitter -> {
            try {
                for (int i = 1; i <= 6; i++) {
                    String reading = "reading-" + i;
                    emitter.emit(reading); // suspends until the subscriber has demand
                    out.println(VirtualClock.clock(io) + " producer: emitted " + reading);
                }
            } finally {
                out.println(VirtualClock.clock(io) + " producer: done");
            }
        });
        CompletableFuture<List<String>> done = new CompletableFuture<>();
        List<Future<Void>> processing = new ArrayList<>();
        readings.subscribe(new Flow.Subscriber<>() {
            private final List<String> received = new ArrayList<>();
            private Flow.Subscription subscription;
            private volatile boolean completed;

            @Override
            public void onSubscribe(Flow.Subscription s) {
                subscription = s;
                out.println(VirtualClock.clock(io) + " subscriber: request(" + BATCH + ")");
                s.request(BATCH);
            }

            @Override
            public void onNext(String reading) {
                received.add(reading);
                out.println(VirtualClock.clock(io) + " subscriber: got " + reading);
                if (received.size() % BATCH == 0) {
                    // process the pair elsewhere, then ask for the next one
                    processing.add(Io.with(io)
                            .call(() -> Io.async(() -> {
                                Io.sleep(Duration.ofMillis(100));
                                if (completed) {
                                    out.println(VirtualClock.clock(io) + " subscriber: processed the last pair");
                                } else {
                                    out.println(VirtualClock.clock(io) + " subscriber: processed a pair, request("
                                            + BATCH + ")");
                                    subscription.request(BATCH);
                                }
                                return null;
                            })));
                }
            }

            @Override
            public void onError(Throwable failure) {
                done.completeExceptionally(failure);
            }

            @Override
            public void onComplete() {
                out.println(VirtualClock.clock(io) + " subscriber: complete");
                completed = true;
                done.complete(received);
            }
        });
        List<String> received = Future.from(done).await(); // the root task suspends until the end
        for (Future<Void> pair : processing) {
            pair.await();
        }
        return received;
    }
}
