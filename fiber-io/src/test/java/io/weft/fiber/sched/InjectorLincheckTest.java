package io.weft.fiber.sched;

import io.weft.fiber.sched.RunQueueLincheckTest.Item;
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
 * Lincheck for the Injector: push, pushBatch, pop, popBatch and size from any thread are
 * linearizable against a sequential FIFO ({@link Spec}), by model checking and by stress. A batch
 * pushed by one call stays contiguous, and a popBatch takes a contiguous run: the FIFO spec checks
 * both, since it moves a batch in one step. {@link Injector#size} is not among the operations: it
 * is a hint for batch sizing and may, while a popBatch is in progress, still count the tasks that
 * batch took (see its Javadoc; InjectorTest checks it where no pop is in flight). Lincheck found
 * exactly that when it was included.
 */
// Lincheck spins its threads against each other: on a loaded machine it runs several times slower.
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@Param(name = "id", gen = IntGen.class, conf = "1:99")
public class InjectorLincheckTest {
    private final Injector injector = new Injector();

    /** Public for Lincheck, which creates one instance per scenario. */
    public InjectorLincheckTest() {}

    /** {@link Injector#push}. */
    @Operation
    public void push(@Param(name = "id") int id) {
        injector.push(new Item(id));
    }

    /** {@link Injector#pushBatch} of two tasks. */
    @Operation
    public void pushTwo(@Param(name = "id") int first, @Param(name = "id") int second) {
        injector.pushBatch(new Runnable[] {new Item(first), new Item(second)}, 0, 2);
    }

    /** {@link Injector#pop}: the id, or -1 if empty. */
    @Operation
    public int pop() {
        Runnable task = injector.pop();
        return task == null ? -1 : ((Item) task).id();
    }

    /** {@link Injector#popBatch} of at most two: the ids, oldest first. */
    @Operation
    public List<Integer> popTwo() {
        Runnable[] into = new Runnable[2];
        int n = injector.popBatch(into, 2);
        List<Integer> ids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ids.add(((Item) into[i]).id());
        }
        return ids;
    }

    /** The sequential specification: a FIFO. */
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

        public List<Integer> popTwo() {
            List<Integer> got = new ArrayList<>();
            for (int i = 0; i < 2 && !ids.isEmpty(); i++) {
                got.add(ids.pollFirst());
            }
            return got;
        }
    }

    @Test
    void isLinearizableUnderModelChecking() {
        new ModelCheckingOptions()
                .iterations(15)
                .invocationsPerIteration(300)
                .sequentialSpecification(Spec.class)
                .check(InjectorLincheckTest.class);
    }

    @Test
    void isLinearizableUnderStress() {
        new StressOptions()
                .iterations(30)
                .invocationsPerIteration(1_000)
                .threads(3)
                .actorsPerThread(3)
                .sequentialSpecification(Spec.class)
                .check(InjectorLincheckTest.class);
    }
}
