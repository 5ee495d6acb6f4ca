package io.weft.reactive.tck;

import io.weft.channel.Channel;
import io.weft.reactive.Reactive;
import io.weft.reactive.WeftPublisher;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * The Reactive Streams TCK for {@link Reactive#fromChannel(Channel)}: a channel that yields
 * {@code n} longs and is closed. Run by {@link ReactiveStreamsTckTest}, through one subclass per
 * Io.
 *
 * <p>A channel cannot fail, so the failed publisher is one made on a closed Io: it must reject
 * each subscriber with onError after onSubscribe (§1.9). BlockingIo cannot be closed; on it the
 * failed-publisher rules are skipped by the TCK itself.
 *
 * <p>The three §1.11 multicast rules are skipped here with the reason, rather than left to the
 * TCK, which would wait for items the other subscribers took and then skip them as "not
 * implemented".
 */
public abstract class FromChannelTck extends PublisherVerification<Long> {
    /** Why the §1.11 multicast rules do not apply; see {@link Reactive#fromChannel(Channel)}. */
    static final String SHARES_ITEMS = "fromChannel shares a channel's items among its subscribers (each item "
            + "goes to one of them), by design: it is not a multicast publisher";

    private final TckIo kind;
    /** The onUndelivered hook, when the two-argument form is under test; null for the one-argument form. */
    private final Consumer<Long> onUndelivered;

    private Sources sources;

    FromChannelTck(TckIo kind) {
        this(kind, null);
    }

    FromChannelTck(TckIo kind, Consumer<Long> onUndelivered) {
        super(Tck.environment(), Tck.SUBSCRIBER_RELEASE_MS);
        this.kind = kind;
        this.onUndelivered = onUndelivered;
    }

    private WeftPublisher<Long> from(Channel<Long> channel) {
        return onUndelivered == null ? Reactive.fromChannel(channel) : Reactive.fromChannel(channel, onUndelivered);
    }

    @BeforeClass
    public void openIo() {
        sources = new Sources(kind);
    }

    @AfterClass(alwaysRun = true)
    public void closeIo() {
        sources.close();
    }

    @Override
    public Publisher<Long> createPublisher(long elements) {
        Channel<Long> channel = sources.channelOf(elements);
        return sources.made(() -> from(channel));
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        Channel<Long> channel = sources.channelOf(1);
        return sources.madeOnClosedIo(() -> from(channel));
    }

    @Override
    @Test
    public void
            optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne() {
        notVerified(SHARES_ITEMS);
    }

    @Override
    @Test
    public void
            optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront() {
        notVerified(SHARES_ITEMS);
    }

    @Override
    @Test
    public void
            optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected() {
        notVerified(SHARES_ITEMS);
    }
}
