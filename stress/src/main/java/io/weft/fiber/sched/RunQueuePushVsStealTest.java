package io.weft.fiber.sched;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.weft.fiber.sched.Ledger.NumberedTask;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * The owner pushes a fifth task into a full {@link RunQueue} of capacity 4 while another worker
 * steals from it: the overflow races the steal's claim. Results: (tasks the stealer got, tasks in
 * the injector, tasks left in the owner's queue), or (-1, -1, -1) if any of the five tasks was
 * lost or duplicated.
 */
@JCStressTest
@Description("Owner push into a full queue (overflow) vs steal.")
@Outcome(id = "2, 0, 3", expect = ACCEPTABLE, desc = "The steal finished first: 2 stolen, the push found room.")
@Outcome(
        id = "1, 3, 1",
        expect = ACCEPTABLE,
        desc = "The overflow won: 2 oldest + new to the injector, 1 of the other 2 stolen.")
@Outcome(
        id = "2, 1, 2",
        expect = ACCEPTABLE,
        desc = "The push ran during the steal: the new task alone went to the injector.")
@Outcome(expect = FORBIDDEN, desc = "A task was lost or duplicated, or an impossible split.")
@State
public class RunQueuePushVsStealTest {
    private final RunQueue owner = new RunQueue(4);
    private final RunQueue thief = new RunQueue(4);
    private final Injector injector = new Injector();
    private Runnable stolen;

    /** Fills the queue with tasks 1 to 4. */
    public RunQueuePushVsStealTest() {
        for (int id = 1; id <= 4; id++) {
            owner.push(new NumberedTask(id), injector);
        }
    }

    /** The owner's push of task 5 into its full queue. */
    @Actor
    public void owner() {
        owner.push(new NumberedTask(5), injector);
    }

    /** Another worker's steal into its own empty queue. */
    @Actor
    public void stealer() {
        stolen = owner.stealInto(thief);
    }

    /**
     * Counts where the tasks went and checks conservation.
     *
     * @param r the results
     */
    @Arbiter
    public void split(III_Result r) {
        Ledger ledger = new Ledger(5);
        int stolenCount = ledger.take(stolen) + ledger.takeAll(thief);
        int injected = ledger.takeAll(injector);
        int left = ledger.takeAll(owner);
        boolean conserved = ledger.conserved();
        r.r1 = conserved ? stolenCount : -1;
        r.r2 = conserved ? injected : -1;
        r.r3 = conserved ? left : -1;
    }
}
