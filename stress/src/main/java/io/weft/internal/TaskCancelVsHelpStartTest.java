package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZZ_Result;

/**
 * A cancel of a running task racing the start of a task it runs in place (join helping: claimed,
 * then run above it on its stack), and that task's cancellation check (Task, "The check's fast
 * path": it answers "no" from the helped task's own state word unless a task below was marked or
 * has scopes). Once cancel() has returned, the check sees the cancel: either the canceller found
 * the helped task in {@code helping} and marked it before returning, or the helped task, starting,
 * read the cancel in its awaiter's word. (While cancel() runs, a check may still pass: the
 * cancel's effect on the tasks above comes with the marks, which precede any wake-up and the
 * return.) Mutant run by hand: without the helped task's read of its awaiter's word in
 * startAbove, the forbidden outcome appears.
 *
 * <p>r1: what cancel() returned; r2: whether the helped task saw that cancel() had returned
 * before its check; r3: whether the check saw the cancel.
 */
@JCStressTest
@Description("A helper's body (claim a task, run it in place: look, check) racing the helper's cancel().")
@Outcome(id = "true, true, true", expect = ACCEPTABLE, desc = "cancel() returned before the check, which saw it.")
@Outcome(id = "true, false, true", expect = ACCEPTABLE, desc = "the check saw a cancel still returning.")
@Outcome(id = "true, false, false", expect = ACCEPTABLE, desc = "the cancel came after the check (or before the helper started).")
@Outcome(id = "false, false, false", expect = ACCEPTABLE, desc = "the helper was done: cancel() was too late.")
@Outcome(id = "true, true, false", expect = FORBIDDEN, desc = "the check missed a cancel that had returned.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskCancelVsHelpStartTest {
    private volatile boolean cancelReturned;
    private volatile boolean sawReturned;
    private volatile boolean checkSaw;
    private final Task<Integer> helper = TaskRig.task(self -> {
        Task<Integer> helped = TaskRig.task(h -> {
            sawReturned = cancelReturned;
            checkSaw = h.isCancellationEffective();
            return 1;
        });
        if (helped.claimForHelper(self)) {
            helped.runHelped(self, Context.slot());
        }
        return 1;
    });

    /** Runs the helper on this thread; it runs the helped task in place. */
    @Actor
    public void runner(ZZZ_Result r) {
        helper.run();
        Thread.interrupted(); // a cancel's interrupt, if one landed: not this test's concern
        r.r2 = sawReturned;
        r.r3 = checkSaw;
    }

    /** Cancels the helper, then says it returned. */
    @Actor
    public void canceller(ZZZ_Result r) {
        r.r1 = helper.cancel();
        cancelReturned = true;
    }
}
