package io.weft.combinators;

import io.weft.testing.Ios;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;

/** Extra selections of {@link Ios#all()} for the combinator tests. */
final class Kinds {
    private Kinds() {}

    /**
     * Kinds on which a body may sleep past a deadline without the test waiting for real: a virtual
     * clock, or a scheduling Io (where the sleeper is cancelled at the deadline).
     */
    static Stream<Named<Ios.Kind>> timed() {
        return Ios.all()
                .filter(k -> k.getPayload().virtualClock() || !k.getPayload().inline());
    }

    /**
     * Kinds where a task parked in a long sleep can be cancelled from another thread before its
     * timer fires: the real clocks (a virtual clock jumps to the timer as soon as all is idle).
     */
    static Stream<Named<Ios.Kind>> cancellableSleep() {
        return Ios.all().filter(k -> !k.getPayload().virtualClock());
    }

    /** Kinds with a virtual clock, where times are exact. */
    static Stream<Named<Ios.Kind>> virtual() {
        return Ios.all().filter(k -> k.getPayload().virtualClock());
    }
}
