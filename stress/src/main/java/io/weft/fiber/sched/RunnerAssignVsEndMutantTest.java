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
 * {@link RunnerAssignVsEndTest} on {@link RunnerEndModel}, whose ending runner takes the job back
 * before it marks itself ended: the worker's assign between the two, and its read of `ended`
 * before the mark, leave the job with nobody: "false, false", the outcome the real test forbids.
 * Not a test of Weft's code.
 */
@JCStressTest
@Description("MUTANT: a runner that takes back its job before it marks itself ended, racing an assign.")
@Outcome(id = "true, false", expect = ACCEPTABLE, desc = "The worker saw the runner ended and took the job back.")
@Outcome(id = "false, true", expect = ACCEPTABLE, desc = "The ending runner took the job and settles it.")
@Outcome(id = "false, false", expect = FORBIDDEN, desc = "MUTANT: lost job, taken by nobody.")
@Outcome(id = "true, true", expect = FORBIDDEN, desc = "The job taken twice.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class RunnerAssignVsEndMutantTest {
    private static final RawTask JOB = RunnerEndModel.job();

    private final RunnerEndModel runner = new RunnerEndModel();

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
