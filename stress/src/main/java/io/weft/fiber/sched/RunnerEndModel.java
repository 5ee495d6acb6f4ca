package io.weft.fiber.sched;

import io.weft.RawTask;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The job of {@link RunnerAssignVsEndTest}, and for {@link RunnerAssignVsEndMutantTest} a
 * deliberately broken copy of the hand-off between a worker's assign and a runner's end in
 * {@link Runner} ("Ending" in its notes): {@link #endAndTakeBack()} takes the assigned job back
 * first and marks the runner ended after, the reverse of Runner's order. A worker can then
 * assign between the two and read `ended` before it is set: nobody takes the job. It exists only
 * to show that the real test can fail; never use it for anything else.
 */
final class RunnerEndModel {
    private static final VarHandle ASSIGNED;

    static {
        try {
            ASSIGNED = MethodHandles.lookup().findVarHandle(RunnerEndModel.class, "assigned", RawTask.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile RawTask assigned;
    private volatile boolean ended;

    /** A job that is never run: only its identity matters. */
    static RawTask job() {
        return new RawTask() {
            @Override
            public void run() {}

            @Override
            public boolean cancel() {
                return false;
            }

            @Override
            public boolean isDone() {
                return false;
            }
        };
    }

    /** As Runner.assign, without the unpark. */
    void assign(RawTask job) {
        assigned = job;
    }

    /** As Runner.tryReclaimIfEnded. */
    boolean tryReclaimIfEnded(RawTask job) {
        return ended && ASSIGNED.compareAndSet(this, job, (RawTask) null);
    }

    /** MUTANT: takes back, then marks ended (Runner marks ended first). */
    RawTask endAndTakeBack() {
        RawTask job = (RawTask) ASSIGNED.getAndSet(this, (RawTask) null);
        ended = true;
        return job;
    }
}
