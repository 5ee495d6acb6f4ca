package io.weft.fiber.sched;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/**
 * {@link IdleWorkersLocalPushVsParkTest} with the pusher's check made as workerToNotify made it
 * before 2026-12-03: a plain volatile read of the state after the push, with no fence between the
 * release store of the queue's tail and that read. The store can then be ordered after the read
 * (a store buffer does it on x86), so the pusher sees the other worker still awake while that
 * worker sees an empty queue: "false, false", the outcome the real test forbids. Not a test of
 * Weft's code.
 */
@JCStressTest
@Description("MUTANT: a local push then an unfenced read of the idle state, racing a park then re-check.")
@Outcome(id = "true, true", expect = ACCEPTABLE, desc = "Both saw each other.")
@Outcome(id = "true, false", expect = ACCEPTABLE, desc = "The pusher saw the worker parked and woke it.")
@Outcome(id = "false, true", expect = ACCEPTABLE, desc = "The worker saw the task.")
@Outcome(id = "false, false", expect = FORBIDDEN, desc = "MUTANT: lost wake-up, the worker parks with the task queued.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class IdleWorkersLocalPushVsParkMutantTest {
    private static final Runnable TASK = () -> {};

    private final IdleWorkers idle = new IdleWorkers(2);
    private final RunQueue pusherQueue = new RunQueue(4);
    private final Injector injector = new Injector();

    /** Worker 1 pushes, then decides from an unfenced read of the counts (the old fast path). */
    @Actor
    public void pusher(ZZ_Result r) {
        pusherQueue.push(TASK, injector);
        boolean wake = idle.searching() == 0 && idle.unparked() < idle.active();
        r.r1 = wake && idle.workerToNotify() >= 0;
    }

    /** Worker 0 counts itself parked, then re-checks the queues. */
    @Actor
    public void parking(ZZ_Result r) {
        idle.transitionToParked(0, false);
        r.r2 = !pusherQueue.isEmpty() || !injector.isEmpty();
    }
}
