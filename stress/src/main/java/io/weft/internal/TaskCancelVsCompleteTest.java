package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZIZ_Result;

/**
 * The task state word: {@code cancel()} racing the body's completion. One side wins and the other
 * sees it: cancel() true means the task ends CANCELLED (a value returned after the cancel is
 * dropped), false means it had already ended with its value; and an interrupt the cancel may have
 * delivered never outlives the task on its thread. {@link TaskCancelVsCompleteMutantTest} runs the
 * same race on a broken copy of the protocol to show this test can fail.
 *
 * <p>r1: what cancel() returned; r2: the final state (1 SUCCESS, 3 CANCELLED); r3: the running
 * thread's interrupt status after the task.
 */
@JCStressTest
@Description("Task.run() (body returns 1) racing Task.cancel().")
@Outcome(id = "true, 3, false", expect = ACCEPTABLE, desc = "cancel won: the task is CANCELLED.")
@Outcome(id = "false, 1, false", expect = ACCEPTABLE, desc = "the body's value won: cancel() was too late.")
@Outcome(id = "true, 1, .*", expect = FORBIDDEN, desc = "cancel() returned true but the task succeeded.")
@Outcome(id = ".*, true", expect = FORBIDDEN, desc = "a cancel's interrupt outlived the task.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskCancelVsCompleteTest {
    private final Task<Integer> task = TaskRig.task(self -> 1);

    /** Runs the task on this thread, then notes whether an interrupt is left over. */
    @Actor
    public void runner(ZIZ_Result r) {
        task.run();
        r.r3 = Thread.interrupted();
    }

    /** Cancels the task. */
    @Actor
    public void canceller(ZIZ_Result r) {
        r.r1 = task.cancel();
    }

    /** The final state. */
    @Arbiter
    public void state(ZIZ_Result r) {
        r.r2 = task.state().ordinal();
    }
}
