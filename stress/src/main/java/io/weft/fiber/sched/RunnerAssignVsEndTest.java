package io.weft.fiber.sched;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.weft.RawTask;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/**
 * A worker assigning a job to a runner it took from its idle pool, and then, as no continuation
 * came back, asking {@link Runner#tryReclaimIfEnded} for the job; racing the runner's end
 * ({@link Runner#endAndTakeBack}: its loop threw while it sat in the pool). Exactly one side
 * must get the job: the worker (it starts it on another runner) or the ending runner (it
 * settles it). Neither is a lost job, both a job run and settled, or run twice.
 * {@link RunnerAssignVsEndMutantTest} ends the runner in the other order and shows the loss.
 *
 * <p>r1: whether the worker took the job back; r2: whether the ending runner got it.
 */
@JCStressTest
@Description("Assigning a job to an idle runner, then reclaiming it if the runner ended, racing the runner's end.")
@Outcome(id = "true, false", expect = ACCEPTABLE, desc = "The worker saw the runner ended and took the job back.")
@Outcome(id = "false, true", expect = ACCEPTABLE, desc = "The ending runner took the job and settles it.")
@Outcome(id = "false, false", expect = FORBIDDEN, desc = "Lost job: assigned to an ended runner, taken by nobody.")
@Outcome(id = "true, true", expect = FORBIDDEN, desc = "The job taken twice.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class RunnerAssignVsEndTest {
    private static final RawTask JOB = RunnerEndModel.job();

    /** No scheduler and no thread: assign's unpark of a null thread does nothing, as of an ended one. */
    private final Runner runner = new Runner(null, null);

    @Actor
    public void worker(ZZ_Result r) {
        runner.assign(JOB);
        r.r1 = runner.tryReclaimIfEnded(JOB);
    }

    @Actor
    public void ending(ZZ_Result r) {
        r.r2 = runner.endAndTakeBack() == JOB;
    }
}
