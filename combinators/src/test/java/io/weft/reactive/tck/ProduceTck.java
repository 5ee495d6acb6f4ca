package io.weft.reactive.tck;

import io.weft.reactive.Reactive;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK for {@link Reactive#produce}: a producer task that emits {@code n}
 * longs, and one that fails at once. Run by {@link ReactiveStreamsTckTest}, through one subclass
 * per Io.
 */
public abstract class ProduceTck extends PublisherVerification<Long> {
    private final TckIo kind;
    private Sources sources;

    ProduceTck(TckIo kind) {
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
    public Publisher<Long> createPublisher(long elements) {
        return sources.made(() -> Reactive.produce(Sources.counting(elements)));
    }

    @Override
    public Publisher<Long> createFailedPublisher() {
        return sources.made(() -> Reactive.produce(Sources.failing()));
    }
}
