package io.weft.fiber.sched;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Mode;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.Signal;
import org.openjdk.jcstress.annotations.State;

/**
 * {@link ParkerUnparkVsParkTest}'s scenario against {@link MutantParker}, whose unpark reads the
 * state and writes it in two steps. STALE here is the lost unpark that the real test forbids:
 * seeing it shows that test bites. Not a test of Weft's code.
 */
@JCStressTest(Mode.Termination)
@Description("MUTANT Parker (unpark = get, then set): the owner parks (no timeout); one unpark.")
@Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "The race did not hit the mutant's window this time.")
@Outcome(
        id = "STALE",
        expect = FORBIDDEN,
        desc = "MUTANT (unpark split into get + set) lost the unpark: the Parker test bites.")
@Outcome(expect = FORBIDDEN, desc = "The owner or the unparker threw.")
@State
public class ParkerUnparkVsParkMutantTest {
    /** As in ParkerUnparkVsParkTest. */
    private static final int JITTER_SPINS = 8;

    private final MutantParker parker = new MutantParker();
    private final StartLine start = new StartLine();
    /** The "work" the unpark announces. Written by the unparker, read by the owner. */
    private volatile boolean published;

    /** The owner, as in ParkerUnparkVsParkTest. */
    @Actor
    public void owner() {
        parker.bind(Thread.currentThread());
        start.await();
        StartLine.jitter(JITTER_SPINS);
        do {
            parker.park(Long.MAX_VALUE);
        } while (!published);
    }

    /** A producer: publishes, then unparks the owner once. */
    @Signal
    public void unparker() {
        start.open();
        StartLine.jitter(JITTER_SPINS);
        published = true;
        parker.unpark();
    }
}
