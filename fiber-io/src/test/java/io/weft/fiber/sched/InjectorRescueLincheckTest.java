package io.weft.fiber.sched;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck for the Injector's rescue slots (its notes, "Rescue slots"): with no memory for a
 * node, every wake-up goes into a slot, and wake-ups and takes from any thread are linearizable
 * against a bag ({@link Spec}). A take is what a worker does: {@link Injector#pop} (or a {@link
 * Injector#popBatch} of one), and when that finds nothing, a look at {@link Injector#isEmpty}
 * before it gives up, trying again while the injector says it is not empty. So the model says: a
 * worker that gives up has missed no queued task, each task is taken once, none is lost. Which
 * rescued task a take returns is not specified (scans start from a rotating slot), so the
 * operations return how many they took, and {@link #eachTaskTakenOnce} checks identities after
 * each run: every task put is either taken exactly once or still queued.
 *
 * <p>A single pop is not linearizable on its own, nor is a popBatch or isEmpty: a scan of the
 * slots can miss a task that moves behind it (one taken from a slot it has not reached, another
 * put into a slot it has passed) and return nothing while the injector never was empty (found by
 * this test); the count makes the look at isEmpty answer "not empty" then, so a worker looks again.
 * isEmpty alone answers "not empty" for a put in progress; a batch may stop short of its maximum
 * for the same reason a pop misses. Only wake-ups without memory are modelled, no nodes: a take
 * prefers rescued tasks to nodes, and the order between the two kinds is not specified either.
 * InjectorLincheckTest covers the node list.
 */
// Lincheck spins its threads against each other: on a loaded machine it runs several times slower.
@Timeout(value = 5, unit = TimeUnit.MINUTES)
public class InjectorRescueLincheckTest {
    private final FailingInjector injector = new FailingInjector(false);
    /** Every task put; every task taken; any taken twice (see eachTaskTakenOnce). */
    private final Set<Runnable> put = ConcurrentHashMap.newKeySet();

    private final Set<Runnable> taken = ConcurrentHashMap.newKeySet();
    private final Set<Runnable> takenTwice = ConcurrentHashMap.newKeySet();
    private final AtomicInteger ids = new AtomicInteger();
    private volatile boolean countBelowZero;

    /** Public for Lincheck, which creates one instance per scenario. */
    public InjectorRescueLincheckTest() {
        injector.noMemoryForNodes = true;
    }

    /** {@link Injector#pushWakeUp} with no memory for a node: the task goes into a rescue slot. */
    @Operation
    public void wakeUp() {
        Runnable task = new RunQueueLincheckTest.Item(ids.incrementAndGet());
        put.add(task);
        injector.pushWakeUp(task);
    }

    /** A worker's take through {@link Injector#pop}: 1 if it took a task, 0 if none was queued. */
    @Operation
    public int pop() {
        return take(() -> injector.pop());
    }

    /** A worker's take through {@link Injector#popBatch} of one: 1 if it took a task, 0 if none. */
    @Operation
    public int popBatchOfOne() {
        return take(() -> {
            Runnable[] into = new Runnable[1];
            return injector.popBatch(into, 1) == 1 ? into[0] : null;
        });
    }

    /** Takes with {@code attempt} until it returns a task or the injector says it is empty. */
    private int take(Supplier<Runnable> attempt) {
        while (true) {
            if (took(attempt.get())) {
                return 1;
            }
            if (injector.isEmpty()) {
                return 0;
            }
            if (injector.rescuedCount() < 0) { // a slot uncounted twice: isEmpty would never hold
                countBelowZero = true;
                return 0;
            }
        }
    }

    private boolean took(Runnable task) {
        if (task == null) {
            return false;
        }
        if (!taken.add(task)) {
            takenTwice.add(task); // reported by eachTaskTakenOnce: a throw here would end the run early
        }
        return true;
    }

    /**
     * After a run: the tasks still queued (taken now, alone) and the tasks taken are together
     * exactly the tasks put, none twice; the slots' count is back to 0.
     */
    @Validate
    public void eachTaskTakenOnce() {
        if (countBelowZero) {
            throw new AssertionError("the rescue slots' count went below 0");
        }
        if (!takenTwice.isEmpty()) {
            throw new AssertionError("taken twice: " + takenTwice);
        }
        Map<Runnable, Boolean> seen = new IdentityHashMap<>();
        for (Runnable task : taken) {
            seen.put(task, true);
        }
        for (Runnable task; (task = injector.pop()) != null; ) {
            if (seen.put(task, true) != null) {
                throw new AssertionError("a task taken during the run is still queued: " + task);
            }
        }
        if (!seen.keySet().equals(Set.copyOf(put)) || seen.size() != put.size()) {
            throw new AssertionError("put " + put + ", taken or left " + seen.keySet());
        }
        if (injector.rescuedCount() != 0 || !injector.isEmpty()) {
            throw new AssertionError("rescue count " + injector.rescuedCount() + " with every task taken");
        }
    }

    /** The sequential specification: a bag that counts its tasks. */
    public static final class Spec {
        private int queued;

        /** Public for Lincheck. */
        public Spec() {}

        public void wakeUp() {
            queued++;
        }

        public int pop() {
            if (queued == 0) {
                return 0;
            }
            queued--;
            return 1;
        }

        public int popBatchOfOne() {
            return pop();
        }
    }

    @Test
    void isLinearizableUnderModelChecking() {
        new ModelCheckingOptions()
                .loopBound(4 * Injector.RESCUE_SLOTS) // a scan of the slots is not a livelock
                // Lincheck 3.7's minimization of a failure found here threw a NullPointerException
                // of its own (SnapshotTracker.restoreValues), hiding the failure's report.
                .minimizeFailedScenario(false)
                .iterations(15)
                .invocationsPerIteration(300)
                .sequentialSpecification(Spec.class)
                .check(InjectorRescueLincheckTest.class);
    }

    @Test
    void isLinearizableUnderStress() {
        new StressOptions()
                .iterations(30)
                .invocationsPerIteration(1_000)
                .threads(3)
                .actorsPerThread(3)
                .sequentialSpecification(Spec.class)
                .check(InjectorRescueLincheckTest.class);
    }
}
