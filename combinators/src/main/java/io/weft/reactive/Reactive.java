package io.weft.reactive;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.channel.Channel;
import io.weft.channel.ChannelClosed;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;

/**
 * Reactive Streams, both directions: Weft futures, channels and producer tasks as
 * {@link Publisher}s, and any publisher consumed by Weft tasks through an {@link Inbox}.
 * {@link Flows} has the same methods for {@link java.util.concurrent.Flow}.
 *
 * {@snippet :
 * // Weft -> Publisher: backpressure by suspension
 * WeftPublisher<Integer> squares = Reactive.produce(emitter -> {
 *     for (int i = 1; i <= 1_000; i++) {
 *         emitter.emit(i * i);            // suspends until the subscriber requests more
 *     }
 * });
 * Flux.from(squares).limitRate(16).subscribe(System.out::println);
 *
 * // Publisher -> Weft: a suspending iteration with bounded prefetch
 * try (Inbox<Integer> inbox = Reactive.subscribe(Flux.range(1, 100), 16)) {
 *     for (int n : inbox) {
 *         handle(n);
 *     }
 * }
 * }
 *
 * <p><b>Which Io.</b> A producer runs as a task on the Io {@linkplain Io#current() installed} when
 * {@link #produce} was called, whatever thread later subscribes. On a scheduling Io (FiberIo) that
 * is a fiber. On an Io that runs tasks inline (BlockingIo) running it inline would block the
 * subscriber's own thread at the first emit without demand, so each subscription's producer gets
 * a virtual thread of its own, with that Io installed; the subscriber's thread is never blocked by
 * subscribe or request. On a BlockingIo with a virtual clock, that thread takes turns with the
 * threads inside {@code Io.with(io)}, so a simulated program that consumes a producer runs the
 * same way every time.
 */
public final class Reactive {
    /** The prefetch of {@link #awaitLast} and {@link #collect}. */
    static final int DRAIN_PREFETCH = 256;

    private Reactive() {}

    // ---------------------------------------------------------------- Weft -> Publisher

    /**
     * Returns a publisher that runs {@code producer} as a task for each subscriber. Each
     * {@link Emitter#emit} suspends the task until the subscriber has demand. The producer
     * returning completes the stream ({@code onComplete}); throwing fails it ({@code onError});
     * {@code Subscription.cancel()} cancels the task at its next suspend point (its
     * {@code finally} blocks run) and signals nothing more (beyond one signal the producer may
     * already have under way, see {@link WeftPublisher}). The task starts right after
     * {@code onSubscribe}, so a producer that fails or ends at once is reported without demand.
     * A subscription cancelled before its task started (inside {@code onSubscribe}, or at once
     * after it) never runs the producer, as a Weft task cancelled before it starts never runs its
     * body. A producer that fails after a cancel (its cleanup throws) has no signal left to carry
     * the failure: it goes to the Io's uncaught-exception handler, else the thread's.
     *
     * @param producer the body of each subscription's producer task
     * @param <T> the type of the items
     * @return a cold publisher
     * @throws NullPointerException if {@code producer} is null
     */
    public static <T> WeftPublisher<T> produce(Producer<T> producer) {
        Objects.requireNonNull(producer, "producer");
        Io io = Io.current();
        return new WeftPublisher<>("producer on " + io, sink -> new ProducerRun<T>(io, producer, sink).start());
    }

    /**
     * Returns a publisher of {@code future}'s outcome: its value as the one item followed by
     * {@code onComplete} (a null value: just {@code onComplete}), its failure as {@code onError},
     * a cancellation as {@code onError(Cancelled)}. Each subscriber gets the same outcome.
     * Cancelling a subscription does not cancel the future (others may be waiting for it).
     * When the future completes, the Io {@linkplain Io#current() installed} when this was called
     * delivers the signals: on a scheduling Io as a task of its own, so they never run inside the
     * future's completion and the completing thread does not wait; on an inline Io at once, on
     * the completing thread. When the subscriber requests after the future is done, the item
     * comes on the requesting thread.
     *
     * @param future the future to publish
     * @param <T> the type of the value
     * @return a publisher of at most one item
     * @throws NullPointerException if {@code future} is null
     */
    public static <T> WeftPublisher<T> fromFuture(Future<? extends T> future) {
        Objects.requireNonNull(future, "future");
        Io io = Io.current();
        return new WeftPublisher<>("future " + future, sink -> new FutureRun<T>(io, future, sink).start());
    }

    /**
     * Returns a publisher of the items received from {@code channel} until it is closed and
     * drained ({@code onComplete}). Each subscription is a producer task that receives an item
     * only when its subscriber has demand; several subscribers share the items (each item goes to
     * one of them). Cancelling a subscription stops its receiving; the channel stays open.
     *
     * <p>An item received at the moment the subscriber cancels cannot be delivered and is
     * dropped; use {@link #fromChannel(Channel, Consumer)} when items hold resources.
     *
     * @param channel the channel to drain
     * @param <T> the type of the items
     * @return a publisher of the channel's items
     * @throws NullPointerException if {@code channel} is null
     */
    public static <T> WeftPublisher<T> fromChannel(Channel<? extends T> channel) {
        return fromChannel(channel, item -> {});
    }

    /**
     * As {@link #fromChannel(Channel)}, passing to {@code onUndelivered} the item that a
     * subscription had received from the channel but could not deliver because its subscriber
     * cancelled.
     *
     * @param channel the channel to drain
     * @param onUndelivered called with each received but undelivered item, on the producer task
     * @param <T> the type of the items
     * @return a publisher of the channel's items
     * @throws NullPointerException if an argument is null
     */
    public static <T> WeftPublisher<T> fromChannel(Channel<? extends T> channel, Consumer<? super T> onUndelivered) {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(onUndelivered, "onUndelivered");
        Io io = Io.current();
        Producer<T> drain = emitter -> {
            while (true) {
                emitter.awaitDemand(); // receive only what can be handed on at once
                T item;
                try {
                    item = channel.receive();
                } catch (ChannelClosed end) {
                    return;
                }
                try {
                    emitter.emit(item);
                } catch (Cancelled cancelled) {
                    onUndelivered.accept(item);
                    throw cancelled;
                }
            }
        };
        return new WeftPublisher<>(channel + " on " + io, sink -> new ProducerRun<T>(io, drain, sink).start());
    }

    // ---------------------------------------------------------------- Publisher -> Weft

    /**
     * Subscribes an {@link Inbox} with {@code prefetch} to {@code publisher} and returns it. If
     * called inside a task, the subscription is tied to that task: it is cancelled when the task
     * ends, if it is still open. Close the inbox (try-with-resources) when done with it early.
     *
     * @param publisher the publisher to consume
     * @param prefetch how many items may be requested ahead of the receivers, 1 to 65,536
     * @param <T> the type of the items
     * @return the subscribed inbox
     * @throws NullPointerException if {@code publisher} is null
     * @throws IllegalArgumentException if {@code prefetch} is less than 1 or more than 65,536
     */
    public static <T> Inbox<T> subscribe(Publisher<? extends T> publisher, int prefetch) {
        Objects.requireNonNull(publisher, "publisher");
        Inbox<T> inbox = boundInbox(prefetch);
        subscribeOrCancel(inbox, () -> publisher.subscribe(inbox));
        return inbox;
    }

    /**
     * Waits for {@code publisher}'s first item and cancels the subscription.
     *
     * @param publisher the publisher
     * @param <T> the type of the items
     * @return the first item
     * @throws NoSuchElementException if the publisher completes without an item
     * @throws Cancelled if the current task is cancelled while waiting (the subscription is
     *     cancelled too)
     * @throws RuntimeException the publisher's failure, as {@link Inbox#receive()} reports it
     */
    public static <T> T awaitFirst(Publisher<? extends T> publisher) {
        try (Inbox<T> inbox = subscribe(publisher, 1)) {
            return first(inbox);
        }
    }

    /**
     * Waits for {@code publisher} to complete and returns its last item.
     *
     * @param publisher the publisher
     * @param <T> the type of the items
     * @return the last item
     * @throws NoSuchElementException if the publisher completes without an item
     * @throws Cancelled if the current task is cancelled while waiting
     * @throws RuntimeException the publisher's failure, as {@link Inbox#receive()} reports it
     */
    public static <T> T awaitLast(Publisher<? extends T> publisher) {
        try (Inbox<T> inbox = subscribe(publisher, DRAIN_PREFETCH)) {
            return last(inbox);
        }
    }

    /**
     * Waits for {@code publisher} to complete and returns all its items, in order.
     *
     * @param publisher the publisher (a finite one)
     * @param <T> the type of the items
     * @return a new mutable list of the items
     * @throws Cancelled if the current task is cancelled while waiting
     * @throws RuntimeException the publisher's failure, as {@link Inbox#receive()} reports it
     */
    public static <T> List<T> collect(Publisher<? extends T> publisher) {
        try (Inbox<T> inbox = subscribe(publisher, DRAIN_PREFETCH)) {
            return all(inbox);
        }
    }

    static <T> Inbox<T> boundInbox(int prefetch) {
        Inbox<T> inbox = Inbox.withPrefetch(prefetch);
        Io.currentTask().ifPresent(inbox::bindTo);
        return inbox;
    }

    /** Runs {@code subscribe}; if it throws, the inbox is cancelled (and unbound) first. */
    static void subscribeOrCancel(Inbox<?> inbox, Runnable subscribe) {
        try {
            subscribe.run();
        } catch (RuntimeException | Error e) {
            inbox.cancel();
            throw e;
        }
    }

    static <T> T first(Inbox<T> inbox) {
        try {
            return inbox.receiveAndStop(); // the caller cancels next: no request for a second item
        } catch (ChannelClosed end) {
            throw new NoSuchElementException("the publisher completed without an item");
        }
    }

    static <T> T last(Inbox<T> inbox) {
        T last = null;
        for (T item : inbox) {
            last = item;
        }
        if (last == null) {
            throw new NoSuchElementException("the publisher completed without an item");
        }
        return last;
    }

    static <T> List<T> all(Inbox<T> inbox) {
        List<T> items = new ArrayList<>();
        for (T item : inbox) {
            items.add(item);
        }
        return items;
    }
}
