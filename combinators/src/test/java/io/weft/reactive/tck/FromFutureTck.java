package io.weft.reactive.tck;

import io.weft.reactive.Reactive;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK for {@link Reactive#fromFuture}: a task's future with no value (empty
 * stream), with a value (one item), or failed. At most one item, so the TCK skips every rule that
 * needs more. Run by {@link ReactiveStreamsTckTest}, through one subclass per Io.
 */
public abstract class FromFutureTck extends PublisherVerification<Long> {
    private final TckIo kind;
    private Sources sources;

    FromFutureTck(TckIo kind) {
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
    public Publisher<Long> createPublisher(long elements) {
        return Reactive.fromFuture(sources.outcome(elements));
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        return Reactive.fromFuture(sources.failedOutcome());
    }
}
