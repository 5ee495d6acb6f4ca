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
 * A spare worker that parked and woke by its timeout retires ({@link IdleWorkers#retire}) while a
 * producer that pushed a task picks a parked worker to wake ({@link IdleWorkers#workerToNotify}).
 * Exactly one of them wins the spare: if the notifier picked it, it must not retire (it would
 * never run the task it was woken for); if it retired, the notifier must not pick it.
 *
 * <p>Result: (retired 1/0, worker the notifier picked or -1, workers taking part after, searching
 * after).
 */
@JCStressTest
@Description("A spare's retire races a notifier's pick of a parked worker")
@Outcome(id = "1, -1, 1, 0", expect = ACCEPTABLE, desc = "The spare retired first; nobody is parked to wake.")
@Outcome(id = "0, 1, 2, 1", expect = ACCEPTABLE, desc = "The notifier took the spare first; it searches.")
@Outcome(expect = FORBIDDEN, desc = "Both or neither took the spare, or the counts are off.")
@State
public class IdleWorkersRetireVsNotifyTest {
    private final IdleWorkers idle = new IdleWorkers(1);

    public IdleWorkersRetireVsNotifyTest() {
        idle.activate(1); // a spare at index 1: counted unparked and searching
        idle.transitionToParked(1, true); // it found no work and parked (worker 0 is busy)
    }

    /** The spare, back from a park that timed out. */
    @Actor
    public void spare(IIII_Result r) {
        r.r1 = idle.retire(1) ? 1 : 0;
    }

    /** A producer that pushed a task. */
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
