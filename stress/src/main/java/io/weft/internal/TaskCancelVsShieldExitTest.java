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
 * The task state word: {@code cancel()} racing a shield's entry and exit (both in one CAS loop on
 * the same word as the cancel flag). Inside the shield the cancellation is never in effect; after
 * it, the cancel takes effect (the value is dropped); the interrupt that a cancel delivers outside
 * a shield, or that leaving the shield re-raises, never outlives the task on its thread.
 *
 * <p>r1: what cancel() returned; r2: the final state (1 SUCCESS, 3 CANCELLED); r3: whether the body
 * saw the cancellation in effect inside its shield, or an interrupt outlived the task.
 */
@JCStressTest
@Description("Task.run() (body: enterShield, look, exitShield, return 1) racing Task.cancel().")
@Outcome(id = "true, 3, false", expect = ACCEPTABLE, desc = "cancel won: CANCELLED once the shield ended.")
@Outcome(id = "false, 1, false", expect = ACCEPTABLE, desc = "the body's value won: cancel() was too late.")
@Outcome(id = ".*, true", expect = FORBIDDEN, desc = "cancellation inside the shield, or an interrupt leaked.")
@Outcome(expect = FORBIDDEN, desc = "Anything else: cancel() true and SUCCESS, a failure.")
@State
public class TaskCancelVsShieldExitTest {
    private volatile boolean cancelSeenInShield;
    private final Task<Integer> task = TaskRig.task(self -> {
        self.enterShield();
        cancelSeenInShield = self.isCancellationEffective();
        self.exitShield();
        return 1;
    });

    /** Runs the task on this thread, then notes anything that went wrong in it. */
    @Actor
    public void runner(ZIZ_Result r) {
        task.run();
        r.r3 = Thread.interrupted() | cancelSeenInShield;
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
