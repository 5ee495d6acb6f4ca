package io.weft.reactive;

/**
 * The body of a producer task made by {@link Reactive#produce}: it emits items through its
 * {@link Emitter}, each {@link Emitter#emit emit} suspending until the subscriber has demand.
 * Returning normally completes the stream; throwing fails it.
 *
 * @param <T> the type of the items
 */
@FunctionalInterface
public interface Producer<T> {

    /**
     * Produces the stream for one subscriber. Runs as a Weft task, once per subscription.
     *
     * @param emitter where the items go; valid only until this method returns
     * @throws Exception to fail the stream: the subscriber receives it through {@code onError}
     */
    void produce(Emitter<T> emitter) throws Exception;
}
