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
 * A {@link Parker}'s one unpark is never lost, whether it lands before, during or after the
 * owner's park: the owner, parking without a timeout until it has seen the producer's write,
 * always returns. {@link ParkerUnparkVsParkMutantTest} runs the same scenario against a
 * {@link MutantParker} whose unpark is split in two steps, to show that this test can fail.
 */
@JCStressTest(Mode.Termination)
@Description("The owner parks (no timeout) until it sees the producer's write; the producer writes, then unparks once.")
@Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "The owner consumed the notification and returned.")
@Outcome(id = "STALE", expect = FORBIDDEN, desc = "Lost unpark: the owner sleeps although it was notified.")
@Outcome(expect = FORBIDDEN, desc = "The owner or the unparker threw.")
@State
public class ParkerUnparkVsParkTest {
    /** How far the start of the two sides is spread (see StartLine). */
    private static final int JITTER_SPINS = 8;

    private final Parker parker = new Parker();
    private final StartLine start = new StartLine();
    /** The "work" the unpark announces. Written by the unparker, read by the owner. */
    private volatile boolean published;

    /**
     * The owner: binds the parker to itself (this thread, not the one that built the state), then
     * parks at least once and until it sees the write; a park may return spuriously, so it
     * re-checks after every return, as a worker does.
     */
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
