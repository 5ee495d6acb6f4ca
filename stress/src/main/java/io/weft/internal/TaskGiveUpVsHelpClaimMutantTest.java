package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * {@link TaskGiveUpVsHelpClaimTest}'s race with the give-up FiberIo had before 2026-12-02: a check
 * that no helper ran the task, then {@link Task#cancel()}. A claim between the two makes the
 * cancel land on a task running in place: "true, true", the outcome the real test forbids; seeing
 * it shows that test bites. Not a test of Weft's code.
 */
@JCStressTest
@Description("MUTANT give-up (check, then cancel) racing a helper's claim of the task.")
@Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the give-up came first.")
@Outcome(id = "0, 1, 1", expect = ACCEPTABLE, desc = "the claim came first, and the check saw it.")
@Outcome(id = "1, 1, 2", expect = FORBIDDEN, desc = "MUTANT: cancelled while a helper runs it, its end counted twice.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskGiveUpVsHelpClaimMutantTest {
    private final Task<Integer> queued = TaskRig.task(self -> 1);
    /** Whether the awaiter's claim won; written by the awaiter's body. */
    private boolean claimed;
    /** Whether the give-up counted the task's end; written by the Io's actor. */
    private boolean giveUpCounted;
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
    public void io(III_Result r) {
        boolean notHelped = !queued.ranInPlace();
        r.r1 = notHelped && queued.cancel() ? 1 : 0;
        giveUpCounted = notHelped; // the end was counted by the Io whenever no helper was seen
    }

    /** An awaiter claims the task and runs it in place. */
    @Actor
    public void helper(III_Result r) {
        awaiter.run();
        Thread.interrupted(); // the cancel's interrupt, if one landed on the helped task: not this test's concern
        r.r2 = claimed ? 1 : 0;
    }

    /** Ends counted: by the give-up, and by the helper (which counts the end of a task it claimed). */
    @Arbiter
    public void count(III_Result r) {
        r.r3 = (giveUpCounted ? 1 : 0) + (claimed ? 1 : 0);
    }
}
