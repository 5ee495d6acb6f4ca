package io.weft.reactive;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Registration;
import io.weft.channel.Channel;
import io.weft.channel.ChannelClosed;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A subscriber that buffers what a publisher sends, with bounded prefetch, for tasks to
 * {@link #receive()}: the Publisher-to-Weft direction. Both a Reactive Streams
 * {@link Subscriber} and a {@link Flow.Subscriber}. Thread-safe; several tasks may receive from
 * one inbox (each item goes to one of them).
 *
 * {@snippet :
 * try (Inbox<Quote> quotes = Reactive.subscribe(quoteFeed, 32)) {   // at most 32 in flight
 *     for (Quote q : quotes) {                                       // suspends while empty
 *         handle(q);
 *     }
 * }                                                                  // cancels if still open
 * }
 *
 * <p><b>Demand.</b> On subscription it requests {@code prefetch} items; each time
 * {@code prefetch - prefetch / 4} (at least one) have been received it requests that many again.
 * So at most {@code prefetch} items are ever buffered or in flight, and the publisher is never
 * asked for more than there is room for. A publisher that sends more than requested (§1.1) is
 * cancelled and the inbox fails with {@link IllegalStateException}.
 *
 * <p><b>End of stream.</b> After {@code onComplete} and once the buffered items are received,
 * {@link #receive()} throws {@link ChannelClosed} and iteration ends. After {@code onError}, the
 * buffered items are still received first, then {@code receive()} (and iteration) throws the
 * failure as {@link io.weft.Future#await()} does: an unchecked exception as the same instance, a
 * checked one wrapped in {@link CompletionException}.
 *
 * <p><b>Cancellation.</b> {@link #cancel()} (or {@link #close()}) cancels the subscription; the
 * buffered items are dropped and receivers see the end of stream. A task cancelled while it waits
 * in {@code receive()} cancels the subscription too (its {@code receive} consumed nothing), and
 * {@link Reactive#subscribe} also ties the subscription to the subscribing task: when that task
 * ends, however it ends, the subscription is cancelled if still open.
 *
 * @param <T> the type of the items
 */
public final class Inbox<T> implements Subscriber<T>, Flow.Subscriber<T>, Iterable<T>, AutoCloseable {
    /*
     * Implementation notes.
     *
     * Buffer: a Channel of exactly `prefetch` slots. Invariant: buffered + outstanding demand <=
     * prefetch, because the inbox requests only what receivers have taken out. So a well-behaved
     * onNext always finds room (trySend never returns false); if it does not, the publisher broke
     * §1.1. The channel gives receive() its suspension, wake-ups and cancellation safety.
     *
     * Replenishing: `taken` counts items received since the last request; the receive that brings
     * it to `limit` swaps it back to zero by CAS and requests that many. A CAS loop (not an
     * increment) so that concurrent receivers can never step over the limit and stall.
     *
     * Failure: onError stores the failure, then closes the channel; a receiver that sees the
     * channel closed and drained reads the failure after that (the close publishes it).
     *
     * Subscription: `upstream` holds the subscription, or CANCELLED once cancel() ran. onSubscribe
     * installs it by CAS; a second onSubscribe, or one after cancel(), cancels the newcomer (§2.5).
     */

    private static final Object CANCELLED = new Object();

    private final int prefetch;
    private final int limit;
    private final Channel<T> buffer;
    private final AtomicReference<Object> upstream = new AtomicReference<>();
    private final AtomicInteger taken = new AtomicInteger();
    private volatile Throwable failure;
    private volatile Registration taskBinding;

    private Inbox(int prefetch) {
        if (prefetch < 1) {
            throw new IllegalArgumentException("prefetch must be at least 1, was " + prefetch);
        }
        this.prefetch = prefetch;
        this.limit = Math.max(1, prefetch - prefetch / 4);
        this.buffer = Channel.bounded(prefetch);
    }

    /**
     * Creates an unsubscribed inbox; subscribe it to a publisher ({@code publisher.subscribe(inbox)})
     * and receive from it. {@link Reactive#subscribe} does both and ties the subscription to the
     * current task.
     *
     * @param prefetch how many items may be requested ahead of the receivers, at least 1
     * @param <T> the type of the items
     * @return a new inbox
     * @throws IllegalArgumentException if {@code prefetch} is less than 1
     */
    public static <T> Inbox<T> withPrefetch(int prefetch) {
        return new Inbox<>(prefetch);
    }

    // ---------------------------------------------------------------- receiving (tasks)

    /**
     * Receives the next item, suspending the current task (or blocking the current thread) while
     * none is buffered.
     *
     * @return the next item, never null
     * @throws ChannelClosed once the publisher completed and every item was received, or after
     *     {@link #cancel()}
     * @throws Cancelled if the current task is cancelled while waiting (this also cancels the
     *     subscription)
     * @throws RuntimeException the publisher's failure, once every item before it was received
     */
    public T receive() {
        T item;
        try {
            item = buffer.receive();
        } catch (ChannelClosed closed) {
            throw endOfStream(closed);
        } catch (Cancelled cancelled) {
            cancel();
            throw cancelled;
        }
        replenish();
        return item;
    }

    /**
     * Receives an item if one is buffered right now; never suspends.
     *
     * @return the item, or null if none is buffered (see {@link #isDone()} to tell the end)
     */
    public T tryReceive() {
        T item = buffer.tryReceive();
        if (item != null) {
            replenish();
        }
        return item;
    }

    /**
     * Returns whether the stream has ended (completed, failed or cancelled). Buffered items may
     * still be received after a completion or a failure.
     *
     * @return true once no more items will arrive
     */
    public boolean isDone() {
        return buffer.isClosed();
    }

    /**
     * Returns an iterator that {@linkplain #receive() receives} until the end of stream: its
     * {@code hasNext()} may suspend, returns false after completion or cancel, and throws the
     * publisher's failure.
     *
     * @return a consuming iterator
     */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private T next;
            private boolean ended;

            @Override
            public boolean hasNext() {
                if (next != null) {
                    return true;
                }
                if (ended) {
                    return false;
                }
                try {
                    next = receive();
                    return true;
                } catch (ChannelClosed closed) {
                    ended = true;
                    return false;
                }
            }

            @Override
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("the stream has ended");
                }
                T item = next;
                next = null;
                return item;
            }
        };
    }

    /**
     * Cancels the subscription (now, or as soon as it arrives) and ends the stream for receivers:
     * buffered items are dropped. Idempotent; never suspends.
     */
    public void cancel() {
        Object previous = upstream.getAndSet(CANCELLED);
        if (previous instanceof Subscription s) {
            s.cancel();
        } else if (previous instanceof Flow.Subscription s) {
            s.cancel();
        }
        buffer.close();
        while (buffer.tryReceive() != null) {
            // dropped: nobody will receive after a cancel
        }
        Registration binding = taskBinding;
        if (binding != null) {
            binding.close();
        }
    }

    /** Cancels this inbox when {@code task} ends; {@link #cancel()} removes the binding. */
    void bindTo(Future<?> task) {
        taskBinding = task.onDone(this::cancel);
        if (upstream.get() == CANCELLED) {
            taskBinding.close(); // cancelled meanwhile: leave nothing on the task
        }
    }

    /** Same as {@link #cancel()}, for try-with-resources. */
    @Override
    public void close() {
        cancel();
    }

    // ---------------------------------------------------------------- subscriber (publisher's side)

    @Override
    public void onSubscribe(Subscription subscription) {
        Objects.requireNonNull(subscription, "subscription (Reactive Streams §2.13)");
        if (upstream.compareAndSet(null, subscription)) {
            subscription.request(prefetch);
        } else {
            subscription.cancel(); // §2.5: already subscribed, or cancelled
        }
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        Objects.requireNonNull(subscription, "subscription (Reactive Streams §2.13)");
        if (upstream.compareAndSet(null, subscription)) {
            subscription.request(prefetch);
        } else {
            subscription.cancel();
        }
    }

    @Override
    public void onNext(T item) {
        Objects.requireNonNull(item, "item (Reactive Streams §2.13)");
        if (upstream.get() == CANCELLED) {
            return; // in flight when we cancelled: dropped
        }
        boolean added;
        try {
            added = buffer.trySend(item);
        } catch (ChannelClosed closed) {
            return; // ended meanwhile (cancel): dropped
        }
        if (!added) {
            fail(new IllegalStateException("Reactive Streams §1.1: the publisher sent more than the "
                    + prefetch + " items requested"));
        }
    }

    @Override
    public void onError(Throwable failure) {
        Objects.requireNonNull(failure, "failure (Reactive Streams §2.13)");
        if (upstream.get() == CANCELLED) {
            return; // we left first: nobody receives any more
        }
        this.failure = failure;
        buffer.close();
    }

    @Override
    public void onComplete() {
        buffer.close();
    }

    // ---------------------------------------------------------------- internals

    private void fail(Throwable broken) {
        failure = broken;
        Object previous = upstream.getAndSet(CANCELLED);
        if (previous instanceof Subscription s) {
            s.cancel();
        } else if (previous instanceof Flow.Subscription s) {
            s.cancel();
        }
        buffer.close();
    }

    private RuntimeException endOfStream(ChannelClosed closed) {
        Throwable f = failure;
        if (f == null) {
            return closed;
        }
        if (f instanceof RuntimeException r) {
            return r;
        }
        if (f instanceof Error e) {
            throw e;
        }
        return new CompletionException(f);
    }

    private void replenish() {
        while (true) {
            int t = taken.get();
            if (t + 1 < limit) {
                if (taken.compareAndSet(t, t + 1)) {
                    return;
                }
            } else if (taken.compareAndSet(t, 0)) {
                request(t + 1);
                return;
            }
        }
    }

    private void request(long n) {
        Object s = upstream.get();
        if (s instanceof Subscription rs) {
            rs.request(n);
        } else if (s instanceof Flow.Subscription fs) {
            fs.request(n);
        }
    }

    @Override
    public String toString() {
        return "Inbox[prefetch=" + prefetch + (isDone() ? ", done]" : "]");
    }
}
