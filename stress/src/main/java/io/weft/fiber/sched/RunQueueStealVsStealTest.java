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
 * Two workers steal from the same {@link RunQueue} holding four tasks. At most one steal runs at a
 * time: a stealer that finds another steal in progress gives up. Whichever steal claims first
 * takes 2 of the 4; the other takes 1 of the remaining 2, or nothing if it overlapped the first.
 * Results: (tasks stealer 1 got, tasks stealer 2 got, tasks left in the queue), or (-1, -1, -1)
 * if a task was lost or duplicated. Two actors, not three with an owner pop, because jcstress
 * skips tests with more actors than CPUs and Weft's CI machine has two; the pop-vs-steal and
 * push-vs-steal tests cover the owner.
 */
@JCStressTest
@Description("Steal vs steal on a queue holding four tasks.")
@Outcome(
        id = {"2, 1, 1", "1, 2, 1"},
        expect = ACCEPTABLE,
        desc = "The steals ran one after the other: the first took 2 of 4, the second 1 of 2.")
@Outcome(
        id = {"2, 0, 2", "0, 2, 2"},
        expect = ACCEPTABLE,
        desc = "One stealer found the other's steal in progress and gave up.")
@Outcome(expect = FORBIDDEN, desc = "A task was lost or duplicated, or an impossible split.")
@State
public class RunQueueStealVsStealTest {
    private final RunQueue owner = new RunQueue(4);
    private final RunQueue thief1 = new RunQueue(4);
    private final RunQueue thief2 = new RunQueue(4);
    private Runnable stolen1;
    private Runnable stolen2;

    /** Queues tasks 1 to 4. */
    public RunQueueStealVsStealTest() {
        Injector injector = new Injector();
        for (int id = 1; id <= 4; id++) {
            owner.push(new NumberedTask(id), injector);
        }
    }

    /** The first stealer. */
    @Actor
    public void stealer1() {
        stolen1 = owner.stealInto(thief1);
    }

    /** The second stealer. */
    @Actor
    public void stealer2() {
        stolen2 = owner.stealInto(thief2);
    }

    /**
     * Counts where the tasks went and checks conservation.
     *
     * @param r the results
     */
    @Arbiter
    public void split(III_Result r) {
        Ledger ledger = new Ledger(4);
        int got1 = ledger.take(stolen1) + ledger.takeAll(thief1);
        int got2 = ledger.take(stolen2) + ledger.takeAll(thief2);
        int left = ledger.takeAll(owner);
        boolean conserved = ledger.conserved();
        r.r1 = conserved ? got1 : -1;
        r.r2 = conserved ? got2 : -1;
        r.r3 = conserved ? left : -1;
    }
}
