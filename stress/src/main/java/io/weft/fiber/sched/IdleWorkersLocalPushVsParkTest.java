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
 * A worker pushing a task to its own {@link RunQueue} (a release store of the tail) and then
 * asking {@link IdleWorkers#workerToNotify} whom to wake, racing another worker, not searching,
 * that counts itself parked ({@link IdleWorkers#transitionToParked}) and then looks at the queues
 * (Worker's re-check before parking). At least one side must see the other: the pusher wakes the
 * parking worker, or the parking worker sees the task. Both missing is a store-load reordering
 * of the pusher's two steps, which the full fence in workerToNotify rules out;
 * {@link IdleWorkersLocalPushVsParkMutantTest} reads the state without it, as workerToNotify did
 * before 2026-12-03, and shows the forbidden outcome.
 *
 * <p>r1: whether the pusher got a worker to wake; r2: whether the parking worker saw the task.
 */
@JCStressTest
@Description("A local push then workerToNotify, racing a non-searching worker's park then re-check.")
@Outcome(id = "true, true", expect = ACCEPTABLE, desc = "Both saw each other: the re-check skips the park, the wake is spare.")
@Outcome(id = "true, false", expect = ACCEPTABLE, desc = "The pusher saw the worker parked and woke it.")
@Outcome(id = "false, true", expect = ACCEPTABLE, desc = "The worker saw the task and does not park.")
@Outcome(id = "false, false", expect = FORBIDDEN, desc = "Lost wake-up: the worker parks with the task queued.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class IdleWorkersLocalPushVsParkTest {
    private static final Runnable TASK = () -> {};

    /** Two workers: 1 pushes (running, not searching), 0 goes to park (not searching). */
    private final IdleWorkers idle = new IdleWorkers(2);

    private final RunQueue pusherQueue = new RunQueue(4);
    private final Injector injector = new Injector();

    /** Worker 1 pushes to its own queue and asks whom to wake (Scheduler.submit, notifyParked). */
    @Actor
    public void pusher(ZZ_Result r) {
        pusherQueue.push(TASK, injector);
        r.r1 = idle.workerToNotify() >= 0;
    }

    /** Worker 0 counts itself parked, then re-checks the queues (Worker's park, isQueuedWorkPending). */
    @Actor
    public void parking(ZZ_Result r) {
        idle.transitionToParked(0, false);
        r.r2 = !pusherQueue.isEmpty() || !injector.isEmpty();
    }
}
