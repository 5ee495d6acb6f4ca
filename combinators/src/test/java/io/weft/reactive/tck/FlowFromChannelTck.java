package io.weft.reactive.tck;

import io.weft.channel.Channel;
import io.weft.reactive.Flows;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.flow.FlowPublisherVerification;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Test;

/**
 * The Flow TCK for {@link Flows#fromChannel(Channel)}: the same sources and the same skipped rules
 * as {@link FromChannelTck}, through {@link java.util.concurrent.Flow}.
 */
public abstract class FlowFromChannelTck extends FlowPublisherVerification<Long> {
    private final TckIo kind;
    private Sources sources;

    FlowFromChannelTck(TckIo kind) {
        super(Tck.environment(), Tck.SUBSCRIBER_RELEASE_MS);
        this.kind = kind;
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
    public Flow.Publisher<Long> createFlowPublisher(long elements) {
        Channel<Long> channel = sources.channelOf(elements);
        return sources.made(() -> Flows.fromChannel(channel));
    }

    @Override
    public Flow.Publisher<Long> createFailedFlowPublisher() {
        Channel<Long> channel = sources.channelOf(1);
        return sources.madeOnClosedIo(() -> Flows.fromChannel(channel));
    }

    @Override
    @Test
    public void
            optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne() {
        notVerified(FromChannelTck.SHARES_ITEMS);
    }

    @Override
    @Test
    public void
            optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront() {
        notVerified(FromChannelTck.SHARES_ITEMS);
    }

    @Override
    @Test
    public void
            optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected() {
        notVerified(FromChannelTck.SHARES_ITEMS);
    }
}
