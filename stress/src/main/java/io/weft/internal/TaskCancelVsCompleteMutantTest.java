package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZI_Result;

/**
 * {@link TaskCancelVsCompleteTest}'s race on {@link MutantTaskState} with
 * {@link MutantTaskState.Bug#COMPLETE_WITHOUT_CAS}: "true, 2" (cancel() returned true and the task
 * still succeeded) is the outcome the real test forbids; seeing it shows that test bites. Not a
 * test of Weft's code.
 */
@JCStressTest
@Description("MUTANT task state (complete = read, then write): completion racing cancel().")
@Outcome(id = "true, 4", expect = ACCEPTABLE, desc = "cancel won: CANCELLED.")
@Outcome(id = "false, 2", expect = ACCEPTABLE, desc = "the value won.")
@Outcome(id = "true, 2", expect = FORBIDDEN, desc = "MUTANT: cancel() returned true and the task succeeded.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskCancelVsCompleteMutantTest {
    private final MutantTaskState task = new MutantTaskState(MutantTaskState.Bug.COMPLETE_WITHOUT_CAS);

    /** The body returned: complete. */
    @Actor
    public void runner() {
        task.completeWithValue();
    }

    /** Cancels the task. */
    @Actor
    public void canceller(ZI_Result r) {
        r.r1 = task.cancel();
    }

    /** The final lifecycle (2 SUCCEEDED, 4 CANCELLED). */
    @Arbiter
    public void state(ZI_Result r) {
        r.r2 = (int) task.lifecycle();
    }
}
