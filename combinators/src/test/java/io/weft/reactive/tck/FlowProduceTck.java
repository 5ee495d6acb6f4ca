package io.weft.reactive.tck;

import io.weft.reactive.Flows;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.flow.FlowPublisherVerification;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Flow TCK for {@link Flows#produce}: the same sources as {@link ProduceTck}, through
 * {@link java.util.concurrent.Flow} (the TCK adapts its subscribers with {@code FlowAdapters}).
 */
public abstract class FlowProduceTck extends FlowPublisherVerification<Long> {
    private final TckIo kind;
    private Sources sources;

    FlowProduceTck(TckIo kind) {
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
        return sources.made(() -> Flows.produce(Sources.counting(elements)));
    }

    @Override
    public Flow.Publisher<Long> createFailedFlowPublisher() {
        return sources.made(() -> Flows.produce(Sources.failing()));
    }
}
