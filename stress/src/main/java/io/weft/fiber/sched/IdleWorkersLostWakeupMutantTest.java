package io.weft.fiber.sched;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Mode;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.Signal;
import org.openjdk.jcstress.annotations.State;

/**
 * {@link IdleWorkersLostWakeupTest}'s scenarios against a mutant worker that skips the re-check of
 * the queues after {@link IdleWorkers#transitionToParked} ({@link LostWakeupModel#skippingRecheck}).
 * STALE here is the lost wake-up that the real test forbids: seeing it shows that test bites.
 * Not a test of Weft's code; run with -t Mutant, it must FAIL: STALE is forbidden, as for the real code.
 */
public class IdleWorkersLostWakeupMutantTest {

    /** One worker, as in {@link IdleWorkersLostWakeupTest.OneWorker}, against the mutant. */
    @JCStressTest(Mode.Termination)
    @Description("MUTANT worker, no re-check: one worker parks (no timeout); a producer submits a task.")
    @Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "The race did not hit the mutant's window this time.")
    @Outcome(
            id = "STALE",
            expect = FORBIDDEN,
            desc = "MUTANT (no re-check after transitionToParked) lost the wake-up: the lost-wakeup test bites.")
    @Outcome(expect = FORBIDDEN, desc = "The worker or the producer threw.")
    @State
    public static class OneWorker {
        private final LostWakeupModel model = LostWakeupModel.skippingRecheck(1);

        /** Mutant worker 0: find work or park (no re-check), until it took the task. */
        @Actor
        public void worker() {
            model.runWorker();
        }

        /** A thread outside the workers submits one task. */
        @Signal
        public void producer() {
            model.submit();
        }
    }

    /** Two workers, as in {@link IdleWorkersLostWakeupTest.TwoWorkers}, against the mutant. */
    @JCStressTest(Mode.Termination)
    @Description("MUTANT worker, no re-check: worker 0 of two (1 busy) searches, parks; a producer submits.")
    @Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "The race did not hit the mutant's window this time.")
    @Outcome(
            id = "STALE",
            expect = FORBIDDEN,
            desc = "MUTANT (no re-check after transitionToParked) lost the wake-up: the lost-wakeup test bites.")
    @Outcome(expect = FORBIDDEN, desc = "The worker or the producer threw.")
    @State
    public static class TwoWorkers {
        private final LostWakeupModel model = LostWakeupModel.skippingRecheck(2);

        /** Mutant worker 0: find work or park (no re-check), until it took the task. */
        @Actor
        public void worker() {
            model.runWorker();
        }

        /** A thread outside the workers submits one task. */
        @Signal
        public void producer() {
            model.submit();
        }
    }
}
