package io.weft.reactive;

import java.util.Objects;
import java.util.concurrent.Flow;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A Reactive Streams {@link Publisher} made by {@link Reactive} from a future, a channel or a
 * producer task; {@link #asFlow()} is the same publisher as a {@link Flow.Publisher}. Cold: each
 * subscription is served on its own (a producer runs once per subscriber; a future's outcome is
 * replayed to each; a channel's items are shared, each going to one subscriber). Thread-safe.
 *
 * <p>What every subscription guarantees, beyond the specification's required rules:
 * <ul>
 *   <li>Demand is honoured exactly: never more {@code onNext} than requested; requests add up and
 *       saturate at {@link Long#MAX_VALUE} (effectively unbounded, §3.17).
 *   <li>{@code request(n)} with {@code n <= 0} ends the subscription with
 *       {@code onError(IllegalArgumentException)} (§3.9).
 *   <li>{@code request} never calls {@code onNext} on its caller's stack for producer and channel
 *       publishers (the producer task delivers), and at most once for a future publisher, so
 *       {@code request} inside {@code onNext} cannot recurse without bound (§3.3).
 *   <li>Nothing is signalled after a terminal signal. After {@code cancel()} returns, at most one
 *       signal that was already under way on the producer's thread (an {@code onNext} it had
 *       checked for, or the final {@code onComplete}/{@code onError}) may still begin; nothing
 *       after it. A {@code cancel()} made inside a signal is seen by the very next one: no further
 *       signal at all.
 *   <li>A subscriber that throws from any signal ({@code onSubscribe}, {@code onNext},
 *       {@code onComplete}, {@code onError}) is treated as having cancelled (§2.13): nothing more
 *       is signalled to it. {@code subscribe} and {@code request} still return normally (§1.9,
 *       §3.16), and the exception is reported, never dropped: to the uncaught-exception handler
 *       of the Io the publisher was made on, if it has one, else to the handler of the thread
 *       that made the call. A producer's {@code emit} also rethrows an {@code onNext}'s exception
 *       to the producer (a producer that lets it escape an {@code Io.launch} has it reported a
 *       second time).
 *   <li>On a scheduling Io (FiberIo), a {@code fromFuture} publisher's signals never run inside
 *       the future's completion: the publisher's Io delivers them, and the completing thread
 *       does not wait for that. On an inline Io (BlockingIo, the default) they run on the
 *       completing thread, as everything does there.
 * </ul>
 *
 * @param <T> the type of the items
 */
public final class WeftPublisher<T> implements Publisher<T> {

    /** How one kind of publisher serves a new subscriber. */
    interface Source<T> {
        void subscribe(Sink<? super T> sink);
    }

    private final String description;
    private final Source<T> source;
    private final Flow.Publisher<T> flow;

    WeftPublisher(String description, Source<T> source) {
        this.description = description;
        this.source = source;
        this.flow = subscriber -> {
            Objects.requireNonNull(subscriber, "subscriber (Reactive Streams §1.9)");
            source.subscribe(Sink.of(subscriber));
        };
    }

    /**
     * Subscribes {@code subscriber}: calls its {@code onSubscribe} on the calling thread, then
     * serves it as described above.
     *
     * @param subscriber the subscriber, not null
     * @throws NullPointerException if {@code subscriber} is null (Reactive Streams §1.9)
     */
    @Override
    public void subscribe(Subscriber<? super T> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber (Reactive Streams §1.9)");
        source.subscribe(Sink.of(subscriber));
    }

    /**
     * Returns this publisher as a {@link java.util.concurrent.Flow.Publisher}: the same source,
     * the same guarantees, no adapter in between.
     *
     * @return the Flow view of this publisher
     */
    public Flow.Publisher<T> asFlow() {
        return flow;
    }

    @Override
    public String toString() {
        return "WeftPublisher[" + description + "]";
    }
}
