package io.weft.fiber.sched;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * {@link IdleWorkersRetireVsNotifyTest} against a MUTANT spare that retires on its timeout without
 * asking whether a notifier took it meanwhile (it reads the parked bit, then leaves: not one
 * step under the lock). Not a test of Weft's code; run with -t Mutant, it must FAIL: "1, 1"
 * (a retired spare picked by the notifier, so the task it was woken for waits) is forbidden.
 */
@JCStressTest
@Description("MUTANT: a spare retires after a separate look at its parked bit")
@Outcome(id = "1, -1, 1, 0", expect = ACCEPTABLE, desc = "The spare retired first; nobody is parked to wake.")
@Outcome(id = "0, 1, 2, 1", expect = ACCEPTABLE, desc = "The notifier took the spare first; it searches.")
@Outcome(expect = FORBIDDEN, desc = "MUTANT: both took the spare (or neither): the retire test bites.")
@State
public class IdleWorkersRetireVsNotifyMutantTest {
    private final IdleWorkers idle = new IdleWorkers(1);

    public IdleWorkersRetireVsNotifyMutantTest() {
        idle.activate(1);
        idle.transitionToParked(1, true);
    }

    /** The mutant spare: looks, then retires on what it saw, even if a notifier came in between. */
    @Actor
    public void spare(IIII_Result r) {
        boolean stillParked = idle.isParked(1);
        if (stillParked) {
            Thread.onSpinWait(); // the window a notifier can take the spare in
            idle.retire(1); // its answer is ignored: the mutant already decided
        }
        r.r1 = stillParked ? 1 : 0;
    }

    @Actor
    public void notifier(IIII_Result r) {
        r.r2 = idle.workerToNotify();
    }

    @Arbiter
    public void after(IIII_Result r) {
        r.r3 = idle.active();
        r.r4 = idle.searching();
    }
}
