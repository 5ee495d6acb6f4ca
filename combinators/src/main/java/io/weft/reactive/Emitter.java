package io.weft.reactive;

import io.weft.Cancelled;

/**
 * The producer side of one subscription made by {@link Reactive#produce}: hands items to the
 * subscriber, suspending the producer task while the subscriber has no outstanding demand.
 *
 * <p>Not thread-safe by design: one task emits at a time (a second, concurrent {@code emit} is
 * refused with {@link IllegalStateException}), which is what keeps the subscriber's signals serial
 * (Reactive Streams §1.3). Producers that gather items from several tasks send them to a
 * {@link io.weft.channel.Channel} and emit from one loop.
 *
 * @param <T> the type of the items
 */
public interface Emitter<T> {

    /**
     * Delivers {@code item} to the subscriber ({@code onNext}), first suspending the calling task
     * until the subscriber has requested at least one more item. This is the producer's
     * backpressure: a producer never runs ahead of demand.
     *
     * <p>Cancellation: if the subscriber cancels (or signals an invalid request), the waiting or
     * next {@code emit} throws {@link Cancelled} without delivering; the producer task is also
     * cancelled, so its other suspend points throw too and its {@code finally} blocks run. An item
     * whose {@code emit} throws was not delivered.
     *
     * @param item the item, not null (Reactive Streams §2.13)
     * @throws Cancelled if the subscription is cancelled, or the producer task is cancelled while
     *     it waits for demand
     * @throws NullPointerException if {@code item} is null
     * @throws IllegalStateException if called concurrently with another {@code emit}, or after the
     *     producer returned
     */
    void emit(T item);

    /**
     * Suspends the calling task until the subscriber has outstanding demand, without emitting.
     * Lets a producer fetch an item only when it can hand it on at once (so nothing is fetched
     * and then dropped by a cancellation that arrives while waiting).
     *
     * @throws Cancelled as for {@link #emit}
     */
    void awaitDemand();

    /**
     * Returns whether the subscriber has cancelled (or made an invalid request); once true, every
     * {@link #emit} throws {@link Cancelled}.
     *
     * @return {@code true} once the subscription has ended from the subscriber's side
     */
    boolean isCancelled();
}
