package io.weft.internal;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE_INTERESTING;

import java.util.concurrent.atomic.AtomicInteger;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.I_Result;

/**
 * {@link TaskOnDoneVsCompleteTest}'s race on {@link MutantWaiterStack}, whose pusher does not look
 * again after its push. Expected to show the lost action ("0") that the real test forbids; run
 * with {@code stress/run-jcstress.sh -t TaskOnDoneVsCompleteMutant}.
 *
 * <p>r1: how many times the action ran.
 */
@JCStressTest
@Description("MutantWaiterStack.complete() racing onDone(action): the broken copy loses the action.")
@Outcome(id = "1", expect = ACCEPTABLE, desc = "the action ran once.")
@Outcome(id = "0", expect = ACCEPTABLE_INTERESTING, desc = "lost: what the real stack prevents.")
@State
public class TaskOnDoneVsCompleteMutantTest {
    private final MutantWaiterStack stack = new MutantWaiterStack();
    private final AtomicInteger runs = new AtomicInteger();

    /** Completes. */
    @Actor
    public void completer() {
        stack.complete();
    }

    /** Registers the action. */
    @Actor
    public void registrar() {
        stack.onDone(runs::incrementAndGet);
    }

    /** How often the action ran. */
    @Arbiter
    public void count(I_Result r) {
        r.r1 = runs.get();
    }
}
