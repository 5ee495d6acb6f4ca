package io.weft.reactive.tck;

import io.weft.reactive.Inbox;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberWhiteboxVerification;

/**
 * The Reactive Streams TCK (whitebox) for {@link Inbox}: the TCK watches every signal the inbox
 * gets and every call it makes on its subscription. Run by {@link ReactiveStreamsTckTest}.
 *
 * <p>An inbox asks for items as receivers take them out: with a prefetch of one it requests one
 * item on subscription and one more for each item received. So the TCK's "request n" is played
 * by a receiver that takes n items (on a virtual thread of its own, waiting at most a few seconds
 * for each), and "cancel" by {@link Inbox#cancel()}.
 */
public class InboxWhiteboxTck extends SubscriberWhiteboxVerification<Long> {
    /** How long the puppet's receiver waits for each item the TCK may or may not send. */
    private static final Duration RECEIVER_PATIENCE = Duration.ofSeconds(10);

    public InboxWhiteboxTck() {
        super(Tck.environment());
    }

    @Override
    public Subscriber<Long> createSubscriber(WhiteboxSubscriberProbe<Long> probe) {
        Inbox<Long> inbox = Inbox.withPrefetch(1);
        AtomicBoolean registered = new AtomicBoolean();
        return new Subscriber<>() {
            @Override
            public void onSubscribe(Subscription subscription) {
                inbox.onSubscribe(subscription);
                if (registered.compareAndSet(false, true)) { // a second onSubscribe is the inbox's to refuse
                    probe.registerOnSubscribe(puppet(inbox));
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

    /** Plays the TCK's "request n" and "cancel" on {@code inbox} (see the class comment). */
    static SubscriberPuppet puppet(Inbox<Long> inbox) {
        return new SubscriberPuppet() {
            @Override
            public void triggerRequest(long elements) {
                Thread.ofVirtual().name("tck-inbox-receiver").start(() -> receive(inbox, elements));
            }

            @Override
            public void signalCancel() {
                inbox.cancel();
            }
        };
    }

    /** Takes {@code elements} items out of the inbox, each of which makes it request one more. */
    private static void receive(Inbox<Long> inbox, long elements) {
        for (long i = 0; i < elements; i++) {
            try {
                inbox.receive(RECEIVER_PATIENCE);
            } catch (RuntimeException endedOrTimedOut) {
                return; // the stream ended (completed, failed, cancelled) or the TCK sent no more
            }
        }
    }

    @Override
    public Long createElement(int element) {
        return (long) element;
    }
}
