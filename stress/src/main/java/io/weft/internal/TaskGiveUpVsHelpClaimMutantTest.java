package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/**
 * {@link TaskGiveUpVsHelpClaimTest}'s race with the give-up FiberIo had before 2026-12-02: a check
 * that no helper ran the task, then {@link Task#cancel()}. A claim between the two makes the
 * cancel land on a task running in place: "true, true", the outcome the real test forbids; seeing
 * it shows that test bites. Not a test of Weft's code.
 */
@JCStressTest
@Description("MUTANT give-up (check, then cancel) racing a helper's claim of the task.")
@Outcome(id = "true, false", expect = ACCEPTABLE, desc = "the give-up came first.")
@Outcome(id = "false, true", expect = ACCEPTABLE, desc = "the claim came first, and the check saw it.")
@Outcome(id = "true, true", expect = FORBIDDEN, desc = "MUTANT: cancelled while a helper runs it.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskGiveUpVsHelpClaimMutantTest {
    private final Task<Integer> queued = TaskRig.task(self -> 1);
    /** Whether the awaiter's claim won; written by the awaiter's body. */
    private boolean claimed;
    /** Awaits {@code queued} as Awaiting does when it has not started: claim it, run it in place. */
    private final Task<Integer> awaiter = TaskRig.task(self -> {
        claimed = queued.claimForHelper(self);
        if (claimed) {
            queued.runHelped(self, Context.slot());
        }
        return 1;
    });

    /** The Io gives the queued entry up, in two steps. */
    @Actor
    public void io(ZZ_Result r) {
        r.r1 = !queued.ranInPlace() && queued.cancel();
    }

    /** An awaiter claims the task and runs it in place. */
    @Actor
    public void helper(ZZ_Result r) {
        awaiter.run();
        Thread.interrupted(); // a cancel's interrupt, if one landed (the mutant's): not this test's concern
        r.r2 = claimed;
    }
}
