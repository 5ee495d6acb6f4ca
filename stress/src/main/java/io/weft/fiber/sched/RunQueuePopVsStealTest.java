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
 * The owner pops while another worker steals from a {@link RunQueue} holding one task: exactly one
 * of them gets it. Results: (task the owner popped, task the stealer got, tasks left anywhere, or
 * -1 if a task was lost or duplicated); 0 means none.
 */
public class RunQueuePopVsStealTest {

    /** One queued task. */
    @JCStressTest
    @Description("Owner pop vs steal on a queue holding one task.")
    @Outcome(id = "1, 0, 0", expect = ACCEPTABLE, desc = "The owner popped the task; the steal found none.")
    @Outcome(id = "0, 1, 0", expect = ACCEPTABLE, desc = "The stealer took the task; the pop found none.")
    @Outcome(id = "1, 1, .*", expect = FORBIDDEN, desc = "Both got the task: duplicated.")
    @Outcome(id = "0, 0, .*", expect = FORBIDDEN, desc = "Neither got the task.")
    @Outcome(expect = FORBIDDEN, desc = "A task was lost, duplicated or left behind.")
    @State
    public static class OneTask {
        private final RunQueue owner = new RunQueue(4);
        private final RunQueue thief = new RunQueue(4);
        private Runnable popped;
        private Runnable stolen;

        /** Queues task 1. */
        public OneTask() {
            owner.push(new NumberedTask(1), new Injector());
        }

        /**
         * The owner's pop.
         *
         * @param r the results
         */
        @Actor
        public void owner(III_Result r) {
            popped = owner.pop();
            r.r1 = Ledger.id(popped);
        }

        /**
         * Another worker's steal into its own empty queue.
         *
         * @param r the results
         */
        @Actor
        public void stealer(III_Result r) {
            stolen = owner.stealInto(thief);
            r.r2 = Ledger.id(stolen);
        }

        /**
         * Counts what is left and checks conservation.
         *
         * @param r the results
         */
        @Arbiter
        public void leftOver(III_Result r) {
            Ledger ledger = new Ledger(1);
            ledger.take(popped);
            ledger.take(stolen);
            int left = ledger.takeAll(owner) + ledger.takeAll(thief);
            r.r3 = ledger.conserved() ? left : -1;
        }
    }

    /**
     * Two queued tasks, the first at position 2^32 - 1, so the pop or the claim also wraps the
     * unsigned head counters. The stealer takes half rounded up, which is one task whether it
     * claims before or after the pop, so both always get a task, never the same one.
     */
    @JCStressTest
    @Description("Owner pop vs steal on a queue holding two tasks, across the counter wrap.")
    @Outcome(
            id = "1, 2, 0",
            expect = ACCEPTABLE,
            desc = "The owner popped the first task, the stealer took the second.")
    @Outcome(
            id = "2, 1, 0",
            expect = ACCEPTABLE,
            desc = "The stealer took the first task, the owner popped the second.")
    @Outcome(id = "0, .*", expect = FORBIDDEN, desc = "The owner found no task although one was always left for it.")
    @Outcome(
            id = ".*, 0, .*",
            expect = FORBIDDEN,
            desc = "The stealer found no task although one was always left for it.")
    @Outcome(expect = FORBIDDEN, desc = "A task was lost, duplicated or left behind.")
    @State
    public static class TwoTasks {
        private final RunQueue owner = new RunQueue(4, -1);
        private final RunQueue thief = new RunQueue(4);
        private Runnable popped;
        private Runnable stolen;

        /** Queues tasks 1 and 2. */
        public TwoTasks() {
            Injector injector = new Injector();
            owner.push(new NumberedTask(1), injector);
            owner.push(new NumberedTask(2), injector);
        }

        /**
         * The owner's pop.
         *
         * @param r the results
         */
        @Actor
        public void owner(III_Result r) {
            popped = owner.pop();
            r.r1 = Ledger.id(popped);
        }

        /**
         * Another worker's steal into its own empty queue.
         *
         * @param r the results
         */
        @Actor
        public void stealer(III_Result r) {
            stolen = owner.stealInto(thief);
            r.r2 = Ledger.id(stolen);
        }

        /**
         * Counts what is left and checks conservation.
         *
         * @param r the results
         */
        @Arbiter
        public void leftOver(III_Result r) {
            Ledger ledger = new Ledger(2);
            ledger.take(popped);
            ledger.take(stolen);
            int left = ledger.takeAll(owner) + ledger.takeAll(thief);
            r.r3 = ledger.conserved() ? left : -1;
        }
    }
}
