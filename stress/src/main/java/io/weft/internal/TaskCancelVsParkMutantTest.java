package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.weft.fiber.sched.StartLine;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Mode;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.Signal;
import org.openjdk.jcstress.annotations.State;

/**
 * {@link TaskCancelVsParkTest}'s scenario on {@link MutantTaskState} with
 * {@link MutantTaskState.Bug#CANCEL_READS_PARKED_FIRST}: STALE here is the lost cancel that the
 * real test forbids; seeing it shows that test bites. Not a test of Weft's code.
 */
@JCStressTest(Mode.Termination)
@Description("MUTANT task state (cancel reads the parked thread before its CAS): park racing one cancel.")
@Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "The race did not hit the mutant's window this time.")
@Outcome(id = "STALE", expect = FORBIDDEN, desc = "MUTANT lost the cancel: the task test bites.")
@Outcome(expect = FORBIDDEN, desc = "The task or the canceller threw.")
@State
public class TaskCancelVsParkMutantTest {
    /** As in TaskCancelVsParkTest. */
    private static final int JITTER_SPINS = 8;

    private final StartLine start = new StartLine();
    private final MutantTaskState task = new MutantTaskState(MutantTaskState.Bug.CANCEL_READS_PARKED_FIRST);

    /** The task: parks until cancelled. */
    @Actor
    public void runner() {
        start.await();
        StartLine.jitter(JITTER_SPINS);
        task.parkUntilCancelled();
    }

    /** Cancels the task once. */
    @Signal
    public void canceller() {
        start.open();
        StartLine.jitter(JITTER_SPINS);
        task.cancel();
    }
}
