package io.weft.reactive;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Registration;
import io.weft.TimedOut;
import io.weft.channel.Channel;
import io.weft.channel.ChannelClosed;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 * cancelled and the inbox fails with {@link IllegalStateException}; an {@code onError} the
 * publisher sends after that does not replace it.
 *
 * <p><b>End of stream.</b> Once {@code onComplete} or {@code onError} arrived, the inbox calls
 * nothing more on the subscription (§2.4), however many buffered items receivers then take (a
 * request a receiver was already making on another thread when the signal arrived may still go
 * out: the two are concurrent).
 * After {@code onComplete} and once the buffered items are received,
 * {@link #receive()} throws {@link ChannelClosed} and iteration ends. After {@code onError}, the
 * buffered items are still received first, then {@code receive()} (and iteration) throws the
 * failure as {@link io.weft.Future#await()} does: an unchecked exception as the same instance, a
 * checked one wrapped in {@link CompletionException}.
 *
 * <p><b>Cancellation.</b> {@link #cancel()} (or {@link #close()}) cancels the subscription; the
 * buffered items are dropped and receivers see the end of stream. A {@code receive()} cancelled
 * while it waits throws {@link Cancelled} having consumed nothing, and the inbox stays open for
 * other receivers. For a deadline use {@link #receive(Duration)}, which cannot lose an item at the
 * deadline (a {@code receive()} run as a task under {@code Futures.timeout} can: a task's value
 * after its cancel is dropped).
 * {@link Reactive#subscribe} ties the subscription to the subscribing task: when that task ends,
 * however it ends (cancelled included), the subscription is cancelled if still open.
 *
 * @param <T> the type of the items
 */
public final class Inbox<T> implements Subscriber<T>, Flow.Subscriber<T>, Iterable<T>, AutoCloseable {
    /*
     * Implementation notes.
     *
     * Buffer: a Channel of exactly `prefetch` slots, which gives receive() its suspension,
     * wake-ups and cancellation safety.
     *
     * Demand: `outstanding` = requested - received, added to before a request is issued and taken
     * from by each onNext; below zero means the publisher sent more than asked (§1.1) and the inbox
     * fails. The inbox requests only what receivers have taken out (`taken` counts them; the
     * receive that brings it to `limit` swaps it back to zero by CAS and requests that many, a CAS
     * loop so that concurrent receivers never step over the limit and stall). So buffered plus
     * outstanding never exceeds prefetch and the ring always has room by count. It may still say
     * FULL for a moment: its slots are released in position order, and a receiver that claimed an
     * older slot may not have released it yet while later receivers already counted theirs. onNext
     * then spins (yielding) until that receiver finishes its release, a few instructions away.
     *
     * Calls into the subscription are serialised (§2.7): request(n) adds to `pendingRequests`,
     * cancel sets `cancelWanted`, and whoever moves `wip` from 0 drains both into the subscription
     * until no call is missed (the usual work-in-progress counter). onSubscribe publishes the
     * subscription by CAS (a second one is cancelled, §2.5) and drains what accumulated before it.
     * A subscription whose request throws (§3.16 broken) fails the stream the way a §1.1
     * violation does (fail: the loop then sends the cancel); one whose cancel throws (§3.15) is
     * ignored. Neither escapes the loop, which would leave `wip` above 0 and every later call
     * skipped, and neither escapes receive(), which has taken its item by then.
     *
     * Failure: onError stores the failure, then closes the channel; a receiver that sees the
     * channel closed and drained reads the failure after that (the close publishes it). The first
     * failure stays (CAS from null): a §1.1 violation the inbox detected is not replaced by the
     * onError the publisher may send after the inbox cancelled it.
     *
     * After a terminal signal (§2.4) the subscription counts as cancelled: `upstreamEnded` is set
     * before the channel closes, and drain() sends nothing to the subscription once it is set,
     * so receivers draining the buffered items request nothing more (a request racing the
     * terminal signal on another thread may still go out: the two are concurrent).
     *
     * Task binding: Reactive.subscribe registers cancel() on the subscribing task's onDone; the
     * registration is closed as soon as the stream ends (complete, error, cancel), so an inbox read
     * to its end does not stay attached to a long-lived task.
     */

    /** The largest prefetch: the buffer is allocated up front. */
    static final int MAX_PREFETCH = 1 << 16;

    private final int prefetch;
    private final int limit;
    private final Channel<T> buffer;
    private final AtomicReference<Object> upstream = new AtomicReference<>();
    private final AtomicBoolean cancelled = new AtomicBoolean();
    private final AtomicLong outstanding = new AtomicLong();
    private final AtomicLong pendingRequests = new AtomicLong();
    private final AtomicInteger wip = new AtomicInteger();
    private volatile boolean cancelWanted;
    /** Written only by the thread that holds `wip`. */
    private boolean cancelSent;

    private final AtomicInteger taken = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    /** The publisher sent onComplete or onError: the subscription is over (§2.4). */
    private volatile boolean upstreamEnded;

    private volatile Registration taskBinding;

    private Inbox(int prefetch) {
        if (prefetch < 1 || prefetch > MAX_PREFETCH) {
            throw new IllegalArgumentException("prefetch must be between 1 and " + MAX_PREFETCH
                    + " (its buffer is allocated up front), was " + prefetch);
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
     * @param prefetch how many items may be requested ahead of the receivers, 1 to 65,536
     * @param <T> the type of the items
     * @return a new inbox
     * @throws IllegalArgumentException if {@code prefetch} is out of that range
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
     * @throws Cancelled if the current task is cancelled while waiting (nothing was consumed)
     * @throws RuntimeException the publisher's failure, once every item before it was received
     */
    public T receive() {
        T item = take();
        replenish();
        return item;
    }

    /**
     * Receives the next item and asks for nothing more: for a caller that cancels right after
     * (awaitFirst), so that a cold publisher makes no item only to have it dropped.
     */
    T receiveAndStop() {
        return take();
    }

    private T take() {
        try {
            return buffer.receive();
        } catch (ChannelClosed closed) {
            throw endOfStream(closed);
        }
    }

    /**
     * Receives the next item, waiting at most {@code timeout} on the installed Io's clock; as
     * {@link Channel#receive(Duration)}, a timed-out receive consumed nothing and nothing is lost
     * at the deadline.
     *
     * @param timeout how long to wait at most; zero or negative means do not wait
     * @return the next item, never null
     * @throws TimedOut if no item arrived within {@code timeout}
     * @throws ChannelClosed once the publisher completed and every item was received, or after
     *     {@link #cancel()}
     * @throws Cancelled if the current task is cancelled while waiting (nothing was consumed)
     * @throws RuntimeException the publisher's failure, once every item before it was received
     * @throws NullPointerException if {@code timeout} is null
     */
    public T receive(Duration timeout) {
        T item;
        try {
            item = buffer.receive(timeout);
        } catch (ChannelClosed closed) {
            throw endOfStream(closed);
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
        Iterator<T> items = buffer.iterator(); // receives until closed and drained
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                if (items.hasNext()) {
                    return true;
                }
                if (failure.get() != null) {
                    throw endOfStream(new ChannelClosed("the publisher failed"));
                }
                return false;
            }

            @Override
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("the stream has ended");
                }
                T item = items.next();
                replenish(); // the channel's iterator took it out in hasNext: make room upstream
                return item;
            }
        };
    }

    /**
     * Cancels the subscription (now, or as soon as it arrives) and ends the stream for receivers:
     * buffered items are dropped. Idempotent; never suspends.
     */
    public void cancel() {
        if (!cancelled.compareAndSet(false, true)) {
            return;
        }
        cancelWanted = true;
        drain();
        buffer.close();
        while (buffer.tryReceive() != null) {
            // dropped: nobody will receive after a cancel
        }
        unbind();
    }

    /** Same as {@link #cancel()}, for try-with-resources. */
    @Override
    public void close() {
        cancel();
    }

    /** Cancels this inbox when {@code task} ends, until the stream ends. */
    void bindTo(Future<?> task) {
        taskBinding = task.onDone(this::cancel);
        if (buffer.isClosed()) {
            unbind(); // ended meanwhile: leave nothing on the task
        }
    }

    // ---------------------------------------------------------------- subscriber (publisher's side)

    @Override
    public void onSubscribe(Subscription subscription) {
        Objects.requireNonNull(subscription, "subscription (Reactive Streams §2.13)");
        if (upstream.compareAndSet(null, subscription)) {
            subscribed();
        } else {
            subscription.cancel(); // §2.5: already subscribed
        }
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        Objects.requireNonNull(subscription, "subscription (Reactive Streams §2.13)");
        if (upstream.compareAndSet(null, subscription)) {
            subscribed();
        } else {
            subscription.cancel();
        }
    }

    @Override
    public void onNext(T item) {
        Objects.requireNonNull(item, "item (Reactive Streams §2.13)");
        if (cancelled.get() || cancelWanted) {
            return; // in flight when we cancelled (or failed the stream): dropped
        }
        if (outstanding.decrementAndGet() < 0) {
            fail(new IllegalStateException("Reactive Streams §1.1: the publisher sent more than the items requested"
                    + " (prefetch " + prefetch + ")"));
            return;
        }
        try {
            while (!buffer.trySend(item)) {
                Thread.yield(); // room by count; a receiver is releasing the slot (see the notes)
            }
        } catch (ChannelClosed closed) {
            // ended meanwhile (cancel): dropped
        }
    }

    @Override
    public void onError(Throwable failure) {
        Objects.requireNonNull(failure, "failure (Reactive Streams §2.13)");
        upstreamEnded = true;
        if (cancelled.get()) {
            return; // we left first: nobody receives any more
        }
        this.failure.compareAndSet(null, failure); // a failure the inbox found first stays
        buffer.close();
        unbind();
    }

    @Override
    public void onComplete() {
        upstreamEnded = true;
        buffer.close();
        unbind();
    }

    // ---------------------------------------------------------------- internals

    private void subscribed() {
        request(prefetch);
    }

    private void fail(Throwable broken) {
        failure.compareAndSet(null, broken);
        cancelWanted = true;
        drain();
        buffer.close();
        unbind();
    }

    private void unbind() {
        Registration binding = taskBinding;
        if (binding != null) {
            binding.close();
        }
    }

    private RuntimeException endOfStream(ChannelClosed closed) {
        Throwable f = failure.get();
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
        outstanding.addAndGet(n); // before the request: the items it brings must find it counted
        pendingRequests.addAndGet(n);
        drain();
    }

    /** Issues the pending requests and the cancel to the subscription, one caller at a time. */
    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return; // the thread inside will see what we added
        }
        int missed = 1;
        while (true) {
            Object s = upstream.get();
            if (s != null && !cancelSent && !upstreamEnded) { // §2.4: after onComplete/onError, nothing
                if (cancelWanted) {
                    cancelSent = true;
                    try {
                        if (s instanceof Subscription rs) {
                            rs.cancel();
                        } else {
                            ((Flow.Subscription) s).cancel();
                        }
                    } catch (Throwable broken) {
                        // §3.15 broken; the stream is ending anyway and nothing else is owed upstream
                    }
                } else {
                    long n = pendingRequests.getAndSet(0);
                    if (n > 0) {
                        try {
                            if (s instanceof Subscription rs) {
                                rs.request(n);
                            } else {
                                ((Flow.Subscription) s).request(n);
                            }
                        } catch (Throwable broken) { // §3.16 broken: the stream fails, the loop goes on to cancel
                            fail(new IllegalStateException(
                                    "Reactive Streams §3.16: the publisher's Subscription.request threw", broken));
                        }
                    }
                }
            }
            missed = wip.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }

    @Override
    public String toString() {
        return "Inbox[prefetch=" + prefetch + ", outstanding=" + outstanding.get() + (isDone() ? ", done]" : "]");
    }
}
