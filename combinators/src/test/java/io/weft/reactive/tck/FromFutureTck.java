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
    /** Which future the publisher is made from. */
    enum Made {
        /** A task's future on the Io under test: done at once on BlockingIo, racing on FiberIo. */
        TASK,
        /** A task's future that sleeps first: pending when the TCK subscribes (a scheduling Io). */
        PENDING_TASK,
        /** A foreign CompletionStage completed a little later on a JDK thread. */
        FOREIGN_STAGE
    }

    private final TckIo kind;
    private final Made made;
    private Sources sources;

    FromFutureTck(TckIo kind) {
        this(kind, Made.TASK);
    }

    FromFutureTck(TckIo kind, Made made) {
        super(Tck.environment(), Tck.SUBSCRIBER_RELEASE_MS);
        this.kind = kind;
        this.made = made;
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
        return sources.made(() -> Reactive.fromFuture(
                switch (made) {
                    case TASK -> sources.outcome(elements);
                    case PENDING_TASK -> sources.pendingOutcome(elements, false);
                    case FOREIGN_STAGE -> Sources.stageOutcome(elements);
                }));
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        return sources.made(() -> Reactive.fromFuture(
                switch (made) {
                    case TASK -> sources.failedOutcome();
                    case PENDING_TASK -> sources.pendingOutcome(1, true);
                    case FOREIGN_STAGE -> Sources.failedStageOutcome();
                }));
    }
}
