package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.weft.ParkToken;
import io.weft.fiber.sched.StartLine;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Mode;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.Signal;
import org.openjdk.jcstress.annotations.State;

/**
 * The task state word: {@code cancel()} racing the task's park (the lost-cancel race of Task's
 * implementation notes). The task parks on a token nobody readies, so only the cancel can end the
 * park; whether the cancel lands before the task publishes its token, between that and its
 * re-check, or while it sleeps, the task wakes and ends. {@link TaskCancelVsParkMutantTest} shows
 * the same scenario hanging on a copy of the protocol whose cancel reads the token too early.
 */
@JCStressTest(Mode.Termination)
@Description("A task parks on a token nobody readies; another thread cancels it once.")
@Outcome(id = "TERMINATED", expect = ACCEPTABLE, desc = "The cancel woke the task and it ended.")
@Outcome(id = "STALE", expect = FORBIDDEN, desc = "Lost cancel: the task sleeps although it was cancelled.")
@Outcome(expect = FORBIDDEN, desc = "The task or the canceller threw.")
@State
public class TaskCancelVsParkTest {
    /** How far the start of the two sides is spread (see StartLine). */
    private static final int JITTER_SPINS = 8;

    private final StartLine start = new StartLine();
    private final Task<Integer> task = TaskRig.task(self -> {
        start.await();
        StartLine.jitter(JITTER_SPINS);
        ParkToken token = ParkToken.create();
        TaskRig.IO.suspendRaw(token); // throws Cancelled once the cancel takes effect
        return 1;
    });

    /** Runs the task, which parks until cancelled. */
    @Actor
    public void runner() {
        task.run();
    }

    /** Cancels the task once. */
    @Signal
    public void canceller() {
        start.open();
        StartLine.jitter(JITTER_SPINS);
        task.cancel();
    }
}
