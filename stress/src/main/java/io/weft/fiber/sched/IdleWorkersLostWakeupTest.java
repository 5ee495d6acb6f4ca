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
 * No lost wake-up between a worker going to park and a producer submitting a task (DESIGN §5,
 * {@link IdleWorkers}): the worker, parked without a timeout, always ends up taking the task.
 * The protocol is run by {@link LostWakeupModel}; {@link IdleWorkersLostWakeupMutantTest} runs
 * the same scenario against a worker that skips its re-check, to show that this test can fail.
 */
public class IdleWorkersLostWakeupTest {

    /** One worker: the producer's fast path is "nobody is parked". */
    @JCStressTest(Mode.Termination)
    @Description("One worker parks (no timeout) while a producer submits a task and notifies.")
    @Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "The worker was woken, or saw the task, and took it.")
    @Outcome(id = "STALE", expect = FORBIDDEN, desc = "Lost wake-up: the worker sleeps with the task in the queue.")
    @Outcome(expect = FORBIDDEN, desc = "The worker or the producer threw.")
    @State
    public static class OneWorker {
        private final LostWakeupModel model = LostWakeupModel.of(1);

        /** Worker 0: find work or park, until it took the task. */
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

    /**
     * Two workers, worker 1 busy running a task throughout: worker 0 searches before it parks, so
     * the producer's fast path is "a searcher exists" and worker 0 must notify as last searcher.
     */
    @JCStressTest(Mode.Termination)
    @Description("Worker 0 of two (worker 1 busy) searches, parks (no timeout); a producer submits a task.")
    @Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "Worker 0 was woken, or saw the task itself, and took it.")
    @Outcome(id = "STALE", expect = FORBIDDEN, desc = "Lost wake-up: worker 0 sleeps with the task in the queue.")
    @Outcome(expect = FORBIDDEN, desc = "The worker or the producer threw.")
    @State
    public static class TwoWorkers {
        private final LostWakeupModel model = LostWakeupModel.of(2);

        /** Worker 0: find work or park, until it took the task. */
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
