package io.weft.fiber.sched;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck for the RunQueue: the owner's push and pop and a stealer's steal-half are linearizable
 * against a sequential FIFO ({@link Spec}), by model checking and by stress. Every pushed task is a
 * new object numbered in push order, so a task taken twice or lost shows in the results.
 *
 * <p>popIfHead is not here: it is not linearizable with a steal, and need not be. A steal decides
 * how many to take from the tail it read, then claims with a CAS on head; a popIfHead in between
 * that answers false (head unchanged) saw the queue as it was, while the only order that explains
 * the steal's count puts the steal first. A false answer leaves the entry, which is then skipped
 * when taken; what matters is that a true answer never takes a claimed position and every task is
 * taken once, which RunQueueTest's concurrent test checks with popIfHead in the owner's mix.
 *
 * <p>The scenario keeps to the queue's contract and to what is deterministic: push and pop run on
 * one thread (the owner), steals on one other (a second concurrent stealer may legitimately come
 * back empty-handed while the first copies); the queue starts with 2 slots and may grow to 16,
 * more than a scenario can push, so scenarios grow the ring while a steal claims and copies, and
 * the overflow to the injector, whose batch depends on whether a steal is in progress, is covered
 * by RunQueueTest instead. A steal's result is what the stealer got: the tasks it moved
 * into its own queue, oldest first, then the one it returned.
 */
// Lincheck spins its threads against each other: on a loaded machine it runs several times slower.
@Timeout(value = 5, unit = TimeUnit.MINUTES)
public class RunQueueLincheckTest {
    private static final int CAPACITY = 16;

    private final RunQueue queue = RunQueue.growing(2, CAPACITY);
    private final RunQueue stealerOwn = new RunQueue(CAPACITY);
    private final Injector overflow = new Injector();
    /** The number of the next task pushed: 1, 2, ... in push order (only the owner pushes). */
    private int next = 1;

    /** Public for Lincheck, which creates one instance per scenario. */
    public RunQueueLincheckTest() {}

    /**
     * A task that is only its id (here each push makes a new one, numbered in push order, so
     * results tell every task apart; InjectorLincheckTest uses it too).
     */
    record Item(int id) implements Runnable {
        @Override
        public void run() {}
    }

    private Item newItem() {
        return new Item(next++);
    }

    /** {@link RunQueue#push}, by the owner. */
    @Operation(nonParallelGroup = "owner")
    public void push() {
        queue.push(newItem(), overflow);
    }

    /** {@link RunQueue#pushAll} of two tasks, by the owner: a stealer sees both or neither. */
    @Operation(nonParallelGroup = "owner")
    public void pushTwo() {
        Item first = newItem();
        queue.pushAll(new Runnable[] {first, newItem()}, 0, 2, overflow);
    }

    /** {@link RunQueue#pop}, by the owner: the task's number, or -1 if empty. */
    @Operation(nonParallelGroup = "owner")
    public int pop() {
        Runnable task = queue.pop();
        return task == null ? -1 : ((Item) task).id();
    }

    /** {@link RunQueue#stealInto}, by one stealer: the numbers it got, oldest first. */
    @Operation(nonParallelGroup = "stealer")
    public List<Integer> steal() {
        Runnable returned = queue.stealInto(stealerOwn);
        List<Integer> got = new ArrayList<>();
        for (Runnable moved = stealerOwn.pop(); moved != null; moved = stealerOwn.pop()) {
            got.add(((Item) moved).id());
        }
        if (returned != null) {
            got.add(((Item) returned).id());
        }
        return got;
    }

    /** The sequential specification: a FIFO; a steal takes the older half, rounded up. */
    public static final class Spec {
        private final ArrayDeque<Integer> numbers = new ArrayDeque<>();
        private int next = 1;

        /** Public for Lincheck. */
        public Spec() {}

        public void push() {
            numbers.addLast(next++);
        }

        public void pushTwo() {
            push();
            push();
        }

        public int pop() {
            Integer number = numbers.pollFirst();
            return number == null ? -1 : number;
        }

        public List<Integer> steal() {
            int n = numbers.size() - numbers.size() / 2;
            List<Integer> got = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                got.add(numbers.pollFirst());
            }
            return got;
        }
    }

    @Test
    void ownerAndStealerAreLinearizableUnderModelChecking() {
        new ModelCheckingOptions()
                .iterations(30)
                .invocationsPerIteration(300)
                .actorsBefore(3)
                .actorsPerThread(4)
                .actorsAfter(2)
                .sequentialSpecification(Spec.class)
                .check(RunQueueLincheckTest.class);
    }

    @Test
    void ownerAndStealerAreLinearizableUnderStress() {
        new StressOptions()
                .iterations(30)
                .invocationsPerIteration(2_000)
                .actorsBefore(3)
                .actorsPerThread(4)
                .actorsAfter(2)
                .sequentialSpecification(Spec.class)
                .check(RunQueueLincheckTest.class);
    }
}
