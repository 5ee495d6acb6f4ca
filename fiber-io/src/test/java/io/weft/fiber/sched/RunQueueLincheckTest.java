package io.weft.fiber.sched;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck for the RunQueue: the owner's push and pop and a stealer's steal-half are linearizable
 * against a sequential FIFO ({@link Spec}), by model checking and by stress.
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
@Param(name = "id", gen = IntGen.class, conf = "1:6") // few ids: popIfHead often names the head
public class RunQueueLincheckTest {
    private static final int CAPACITY = 16;

    private final RunQueue queue = RunQueue.growing(2, CAPACITY);
    private final RunQueue stealerOwn = new RunQueue(CAPACITY);
    private final Injector overflow = new Injector();

    /** One task object per id, so popIfHead (which compares identity) can name a queued task. */
    private final Item[] items = new Item[100];

    private Item item(int id) {
        if (items[id] == null) {
            items[id] = new Item(id);
        }
        return items[id];
    }

    /** Public for Lincheck, which creates one instance per scenario. */
    public RunQueueLincheckTest() {}

    /** A task that is only its id. */
    record Item(int id) implements Runnable {
        @Override
        public void run() {}
    }

    /** {@link RunQueue#push}, by the owner. */
    @Operation(nonParallelGroup = "owner")
    public void push(@Param(name = "id") int id) {
        queue.push(item(id), overflow);
    }

    /** {@link RunQueue#pushAll} of two tasks, by the owner: a stealer sees both or neither. */
    @Operation(nonParallelGroup = "owner")
    public void pushTwo(@Param(name = "id") int first, @Param(name = "id") int second) {
        queue.pushAll(new Runnable[] {item(first), item(second)}, 0, 2, overflow);
    }

    /** {@link RunQueue#pop}, by the owner: the id, or -1 if empty. */
    @Operation(nonParallelGroup = "owner")
    public int pop() {
        Runnable task = queue.pop();
        return task == null ? -1 : ((Item) task).id();
    }

    /** {@link RunQueue#popIfHead}, by the owner: whether the head was the task of this id and went. */
    @Operation(nonParallelGroup = "owner")
    public boolean popIfHead(@Param(name = "id") int id) {
        return queue.popIfHead(item(id));
    }

    /** {@link RunQueue#stealInto}, by one stealer: the ids it got, oldest first. */
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
        private final ArrayDeque<Integer> ids = new ArrayDeque<>();

        /** Public for Lincheck. */
        public Spec() {}

        public void push(int id) {
            ids.addLast(id);
        }

        public void pushTwo(int first, int second) {
            ids.addLast(first);
            ids.addLast(second);
        }

        public int pop() {
            Integer id = ids.pollFirst();
            return id == null ? -1 : id;
        }

        public boolean popIfHead(int id) {
            Integer first = ids.peekFirst();
            if (first == null || first != id) {
                return false;
            }
            ids.pollFirst();
            return true;
        }

        public List<Integer> steal() {
            int n = ids.size() - ids.size() / 2;
            List<Integer> got = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                got.add(ids.pollFirst());
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
