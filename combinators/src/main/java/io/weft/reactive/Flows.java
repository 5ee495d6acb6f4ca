package io.weft.reactive;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.channel.Channel;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.Flow;
import java.util.function.Consumer;

/**
 * {@link Reactive}'s adapters for {@link java.util.concurrent.Flow}: the same publishers and the
 * same {@link Inbox}, typed as {@link Flow.Publisher} and {@link Flow.Subscriber}. Every method
 * behaves exactly as its namesake in {@code Reactive}; no adapter sits in between.
 *
 * {@snippet :
 * SubmissionPublisher<String> feed = new SubmissionPublisher<>();
 * try (Inbox<String> lines = Flows.subscribe(feed, 16)) {
 *     for (String line : lines) {
 *         handle(line);
 *     }
 * }
 * }
 */
public final class Flows {
    private Flows() {}

    /**
     * As {@link Reactive#produce}, as a {@link Flow.Publisher}.
     *
     * @param producer the body of each subscription's producer task
     * @param <T> the type of the items
     * @return a cold publisher
     * @throws NullPointerException if {@code producer} is null
     */
    public static <T> Flow.Publisher<T> produce(Producer<T> producer) {
        return Reactive.produce(producer).asFlow();
    }

    /**
     * As {@link Reactive#fromFuture}, as a {@link Flow.Publisher}.
     *
     * @param future the future to publish
     * @param <T> the type of the value
     * @return a publisher of at most one item
     * @throws NullPointerException if {@code future} is null
     */
    public static <T> Flow.Publisher<T> fromFuture(Future<? extends T> future) {
        return Reactive.<T>fromFuture(future).asFlow();
    }

    /**
     * As {@link Reactive#fromChannel(Channel)}, as a {@link Flow.Publisher}.
     *
     * @param channel the channel to drain
     * @param <T> the type of the items
     * @return a publisher of the channel's items
     * @throws NullPointerException if {@code channel} is null
     */
    public static <T> Flow.Publisher<T> fromChannel(Channel<? extends T> channel) {
        return Reactive.<T>fromChannel(channel).asFlow();
    }

    /**
     * As {@link Reactive#fromChannel(Channel, Consumer)}, as a {@link Flow.Publisher}.
     *
     * @param channel the channel to drain
     * @param onUndelivered called with each received but undelivered item
     * @param <T> the type of the items
     * @return a publisher of the channel's items
     * @throws NullPointerException if an argument is null
     */
    public static <T> Flow.Publisher<T> fromChannel(Channel<? extends T> channel, Consumer<? super T> onUndelivered) {
        return Reactive.<T>fromChannel(channel, onUndelivered).asFlow();
    }

    /**
     * As {@link Reactive#subscribe}, for a {@link Flow.Publisher}.
     *
     * @param publisher the publisher to consume
     * @param prefetch how many items may be requested ahead of the receivers, 1 to 65,536
     * @param <T> the type of the items
     * @return the subscribed inbox
     * @throws NullPointerException if {@code publisher} is null
     * @throws IllegalArgumentException if {@code prefetch} is less than 1 or more than 65,536
     */
    public static <T> Inbox<T> subscribe(Flow.Publisher<? extends T> publisher, int prefetch) {
        Objects.requireNonNull(publisher, "publisher");
        Inbox<T> inbox = Reactive.boundInbox(prefetch);
        Reactive.subscribeOrCancel(inbox, () -> publisher.subscribe(inbox));
        return inbox;
    }

    /**
     * As {@link Reactive#awaitFirst}, for a {@link Flow.Publisher}.
     *
     * @param publisher the publisher
     * @param <T> the type of the items
     * @return the first item
     * @throws NoSuchElementException if the publisher completes without an item
     * @throws Cancelled if the current task is cancelled while waiting
     */
    public static <T> T awaitFirst(Flow.Publisher<? extends T> publisher) {
        try (Inbox<T> inbox = subscribe(publisher, 1)) {
            return Reactive.first(inbox);
        }
    }

    /**
     * As {@link Reactive#awaitLast}, for a {@link Flow.Publisher}.
     *
     * @param publisher the publisher
     * @param <T> the type of the items
     * @return the last item
     * @throws NoSuchElementException if the publisher completes without an item
     * @throws Cancelled if the current task is cancelled while waiting
     */
    public static <T> T awaitLast(Flow.Publisher<? extends T> publisher) {
        try (Inbox<T> inbox = subscribe(publisher, Reactive.DRAIN_PREFETCH)) {
            return Reactive.last(inbox);
        }
    }

    /**
     * As {@link Reactive#collect}, for a {@link Flow.Publisher}.
     *
     * @param publisher the publisher (a finite one)
     * @param <T> the type of the items
     * @return a new mutable list of the items
     * @throws Cancelled if the current task is cancelled while waiting
     */
    public static <T> List<T> collect(Flow.Publisher<? extends T> publisher) {
        try (Inbox<T> inbox = subscribe(publisher, Reactive.DRAIN_PREFETCH)) {
            return Reactive.all(inbox);
        }
    }
}
