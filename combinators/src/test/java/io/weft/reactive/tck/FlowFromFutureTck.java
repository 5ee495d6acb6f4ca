package io.weft.reactive.tck;

import io.weft.reactive.Flows;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.flow.FlowPublisherVerification;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Flow TCK for {@link Flows#fromFuture}: the same sources as {@link FromFutureTck}, through
 * {@link java.util.concurrent.Flow}. At most one item, so the TCK skips every rule that needs more.
 */
public abstract class FlowFromFutureTck extends FlowPublisherVerification<Long> {
    private final TckIo kind;
    private Sources sources;

    FlowFromFutureTck(TckIo kind) {
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
    public long maxElementsFromPublisher() {
        return 1;
    }

    @Override
    public Flow.Publisher<Long> createFlowPublisher(long elements) {
        return Flows.fromFuture(sources.outcome(elements));
    }

    @Override
    public Flow.Publisher<Long> createFailedFlowPublisher() {
        return Flows.fromFuture(sources.failedOutcome());
    }
}
