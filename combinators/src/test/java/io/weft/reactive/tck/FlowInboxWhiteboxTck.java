package io.weft.reactive.tck;

import io.weft.reactive.Inbox;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.tck.flow.FlowSubscriberWhiteboxVerification;

/** The Flow TCK (whitebox) for {@link Inbox} as a {@link Flow.Subscriber}; as {@link InboxWhiteboxTck}. */
public class FlowInboxWhiteboxTck extends FlowSubscriberWhiteboxVerification<Long> {
    public FlowInboxWhiteboxTck() {
        super(Tck.environment());
    }

    @Override
    protected Flow.Subscriber<Long> createFlowSubscriber(WhiteboxSubscriberProbe<Long> probe) {
        Inbox<Long> inbox = Inbox.withPrefetch(1);
        AtomicBoolean registered = new AtomicBoolean();
        return new Flow.Subscriber<>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
                inbox.onSubscribe(subscription);
                if (registered.compareAndSet(false, true)) {
                    probe.registerOnSubscribe(InboxWhiteboxTck.puppet(inbox));
                }
            }

            @Override
            public void onNext(Long item) {
                inbox.onNext(item);
                probe.registerOnNext(item);
            }

            @Override
            public void onError(Throwable failure) {
                inbox.onError(failure);
                probe.registerOnError(failure);
            }

            @Override
            public void onComplete() {
                inbox.onComplete();
                probe.registerOnComplete();
            }
        };
    }

    @Override
    public Long createElement(int element) {
        return (long) element;
    }
}
