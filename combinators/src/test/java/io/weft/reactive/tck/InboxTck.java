package io.weft.reactive.tck;

import io.weft.reactive.Inbox;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;

/**
 * The Reactive Streams TCK (blackbox) for {@link Inbox} as a subscriber: it requests its prefetch
 * in {@code onSubscribe}, so it needs no trigger. Run by {@link ReactiveStreamsTckTest}.
 *
 * <p>Run once, on no particular Io: the TCK only signals the inbox (onSubscribe, onNext,
 * onComplete, onError), which buffers or closes without waiting; nothing receives from it, and
 * receiving is the only part of an inbox that involves an Io.
 */
public class InboxTck extends SubscriberBlackboxVerification<Long> {
    /** Below the TCK's cap of 512 items per request, so the whole requested stream is sent. */
    static final int PREFETCH = 16;

    public InboxTck() {
        super(Tck.environment());
    }

    @Override
    public Subscriber<Long> createSubscriber() {
        return Inbox.withPrefetch(PREFETCH);
    }

    @Override
    public Long createElement(int element) {
        return (long) element;
    }
}
