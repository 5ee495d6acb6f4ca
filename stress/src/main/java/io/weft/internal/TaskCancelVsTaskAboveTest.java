package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.weft.Future;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZZZ_Result;

/**
 * A cancel of a running task racing the start and end of a task it runs above itself on its
 * stack (an inline child here; join helping goes through the same Task.startAbove and endAbove,
 * and gives the interrupt back in Task.runHelped, which this does not run): the cancel's
 * interrupt never lands in the task above, and when the cancelled task has its thread interrupted
 * afterwards, its record of that (INTERRUPTED) says so, so a shield it enters absorbs it and
 * nothing outlives the task on its thread. That a held-back interrupt is given back at all is
 * not observable here (a cancel may still be on its way); TasksBeforeThreadsTest and
 * FiberIoStressTest check it. Mutants run by hand: without the canceller's re-read of
 * {@code helping} the child saw the interrupt, and without reclaimInterrupt's wait for
 * INTERRUPTING a shield saw one, each in 14 of 14 configurations.
 *
 * <p>r1: what cancel() returned; r2: whether the task above saw an interrupt; r3: whether the
 * cancelled task's shield, entered after the task above ended, saw one, or an interrupt outlived
 * the task; r4: whether it ended CANCELLED (else SUCCEEDED).
 */
@JCStressTest
@Description("Task.run() (body: run a child above itself, then enter a shield and look) racing Task.cancel().")
@Outcome(id = "true, false, false, true", expect = ACCEPTABLE, desc = "cancel won; it stayed with the parent.")
@Outcome(id = "false, false, false, false", expect = ACCEPTABLE, desc = "the body's value won: cancel() was too late.")
@Outcome(id = ".*, true, .*, .*", expect = FORBIDDEN, desc = "the parent's cancel interrupted the task above it.")
@Outcome(id = ".*, .*, true, .*", expect = FORBIDDEN, desc = "a shield saw the interrupt, or it outlived the task.")
@Outcome(expect = FORBIDDEN, desc = "Anything else: cancel() true and SUCCESS, a failure.")
@State
public class TaskCancelVsTaskAboveTest {
    private volatile boolean childSawInterrupt;
    private volatile boolean shieldSawInterrupt;
    private final Task<Integer> parent = TaskRig.task(self -> {
        Task<Integer> child = TaskRig.task(c -> {
            for (int i = 0; i < 8; i++) { // a few looks, so a late interrupt has room to land
                childSawInterrupt |= Thread.currentThread().isInterrupted();
            }
            return 1;
        });
        child.run(); // above this task on its stack: startAbove, the body, endAbove
        self.enterShield();
        shieldSawInterrupt = Thread.currentThread().isInterrupted();
        self.exitShield();
        return 1;
    });

    /** Runs the parent on this thread, then notes an interrupt that outlived it. */
    @Actor
    public void runner(ZZZZ_Result r) {
        parent.run();
        r.r3 = Thread.interrupted() | shieldSawInterrupt;
        r.r2 = childSawInterrupt;
    }

    /** Cancels the parent. */
    @Actor
    public void canceller(ZZZZ_Result r) {
        r.r1 = parent.cancel();
    }

    /** The final state. */
    @Arbiter
    public void state(ZZZZ_Result r) {
        r.r4 = parent.state() == Future.State.CANCELLED;
    }
}
