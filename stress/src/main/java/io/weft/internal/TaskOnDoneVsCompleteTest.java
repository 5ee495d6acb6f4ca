package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The waiter stack: an {@code onDone} registration racing the task's completion. A completion
 * that finds nobody waiting writes nothing (it only reads the stack), so a registration landing
 * just after that read must see the task done and run its action itself. Either way the action
 * runs exactly once. {@link TaskOnDoneVsCompleteMutantTest} runs the same race on a copy of the
 * protocol whose pusher does not look again, to show this test can fail.
 *
 * <p>r1: how many times the action ran; r2: the final state (1 SUCCESS).
 */
@JCStressTest
@Description("Task.run() (body returns 1) racing Task.onDone(action).")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "the action ran once, on one side or the other.")
@Outcome(id = "0, .*", expect = FORBIDDEN, desc = "lost: the action never ran.")
@Outcome(id = "2, .*", expect = FORBIDDEN, desc = "the action ran twice.")
@Outcome(expect = FORBIDDEN, desc = "Anything else.")
@State
public class TaskOnDoneVsCompleteTest {
    private final Task<Integer> task = TaskRig.task(self -> 1);
    private final AtomicInteger runs = new AtomicInteger();

    /** Runs the task on this thread: its completion runs the registered actions. */
    @Actor
    public void runner() {
        task.run();
    }

    /** Registers the action. */
    @Actor
    public void registrar() {
        task.onDone(runs::incrementAndGet);
    }

    /** How often the action ran, and the final state. */
    @Arbiter
    public void count(II_Result r) {
        r.r1 = runs.get();
        r.r2 = task.state().ordinal();
    }
}
