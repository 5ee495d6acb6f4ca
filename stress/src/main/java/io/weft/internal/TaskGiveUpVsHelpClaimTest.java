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
 * An Io giving up a queued task (FiberIo's Scheduler.discard: its runner could not start, or the
 * Io stopped) racing an awaiter's claim of the same task to run it in place (join helping). The
 * give-up cancels the task only if it has not started, in one step ({@link Task#cancelIfUnstarted}),
 * so exactly one side gets it: a task claimed by a helper is never cancelled for the give-up, and
 * its end is counted once, by the helper. {@link TaskGiveUpVsHelpClaimMutantTest} runs the
 * two-step give-up this replaced (a check of {@link Task#ranInPlace}, then {@link Task#cancel()}),
 * where both sides get it.
 *
 * <p>r1: whether the give-up cancelled the task; r2: whether the awaiter claimed it.
 */
@JCStressTest
@Description("An Io's give-up of a queued task (cancel if not started) racing a helper's claim of it.")
@Outcome(id = "true, false", expect = ACCEPTABLE, desc = "the give-up came first: cancelled before it started.")
@Outcome(id = "false, true", expect = ACCEPTABLE, desc = "the claim came first: the give-up left it to the helper.")
@Outcome(id = "true, true", expect = FORBIDDEN, desc = "cancelled for the give-up while a helper runs it.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskGiveUpVsHelpClaimTest {
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

    /** The Io gives the queued entry up. */
    @Actor
    public void io(ZZ_Result r) {
        r.r1 = queued.cancelIfUnstarted();
    }

    /** An awaiter claims the task and runs it in place. */
    @Actor
    public void helper(ZZ_Result r) {
        awaiter.run();
        Thread.interrupted(); // a cancel's interrupt, if one landed (the mutant's): not this test's concern
        r.r2 = claimed;
    }
}
