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
 * An Io giving up a queued task (FiberIo's Scheduler.discard: its runner could not start, or the
 * Io stopped) racing an awaiter's claim of the same task to run it in place (join helping). The
 * give-up cancels the task only if it has not started, in one step ({@link Task#tryCancelUnstarted}),
 * so exactly one side gets it: a task claimed by a helper is never cancelled for the give-up, and
 * its end is counted once, by the helper. {@link TaskGiveUpVsHelpClaimMutantTest} runs the
 * two-step give-up this replaced (a check of {@link Task#ranInPlace}, then {@link Task#cancel()}),
 * where both sides get it.
 *
 * <p>r1: whether the give-up cancelled the task; r2: whether the awaiter claimed it; r3: how many
 * times the task's end was counted (by the give-up, by the helper).
 */
@JCStressTest
@Description("An Io's give-up of a queued task (cancel if not started) racing a helper's claim of it.")
@Outcome(id = "1, 0, 1", expect = ACCEPTABLE, desc = "the give-up came first: cancelled before it started.")
@Outcome(id = "0, 1, 1", expect = ACCEPTABLE, desc = "the claim came first: the give-up left it to the helper.")
@Outcome(id = "1, 1, 2", expect = FORBIDDEN, desc = "cancelled for the give-up while a helper runs it, its end counted twice.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskGiveUpVsHelpClaimTest {
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

    /** The Io gives the queued entry up. */
    @Actor
    public void io(III_Result r) {
        r.r1 = queued.tryCancelUnstarted() ? 1 : 0;
        giveUpCounted = !queued.ranInPlace(); // as Scheduler.discard counts it
    }

    /** An awaiter claims the task and runs it in place. */
    @Actor
    public void helper(III_Result r) {
        awaiter.run();
        r.r2 = claimed ? 1 : 0;
    }

    /** Ends counted: by the give-up, and by the helper (which counts the end of a task it claimed). */
    @Arbiter
    public void count(III_Result r) {
        r.r3 = (giveUpCounted ? 1 : 0) + (claimed ? 1 : 0);
    }
}
