package io.weft.reactive.tck;

import io.weft.reactive.Inbox;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.flow.FlowSubscriberBlackboxVerification;

/**
 * The Flow TCK (blackbox) for {@link Inbox} as a {@link Flow.Subscriber}; as {@link InboxTck},
 * run once, on no particular Io.
 */
public class FlowInboxTck extends FlowSubscriberBlackboxVerification<Long> {
    public FlowInboxTck() {
        super(Tck.environment());
    }

    @Override
    public Flow.Subscriber<Long> createFlowSubscriber() {
        return Inbox.withPrefetch(InboxTck.PREFETCH);
    }

    @Override
    public Long createElement(int element) {
        return (long) element;
    }
}
