package io.weft.modelcheck;

import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.Lincheck;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.StressOptions;

/**
 * Runs a few threads under Lincheck's model checker, which explores their interleavings
 * ({@link Lincheck#runConcurrentTest}): a lost wake-up shows up as a hang that Lincheck reports
 * with the interleaving that caused it, and a wrong outcome as the assertion error of the check
 * that follows the join, with the same trace.
 *
 * <p>Each invocation builds its objects afresh inside the scenario, so every interleaving starts
 * from the same state.
 */
public final class ModelThreads {
    /** Interleavings explored per scenario: enough to cover a two- or three-thread scenario. */
    public static final int INVOCATIONS = 300;

    private ModelThreads() {}

    /** One scenario: builds its state, returns the threads' bodies and the check after the join. */
    public interface Scenario {
        /** Builds fresh state and returns what the threads run and what to check afterwards. */
        Round build();
    }

    /**
     * The threads of one round and the check that runs once all of them ended.
     *
     * @param threads the bodies, one per thread, started in this order
     * @param check the assertions about the outcome, run after every thread ended
     */
    public record Round(List<Runnable> threads, Runnable check) {
        /** A round of {@code threads} followed by {@code check}. */
        public static Round of(Runnable check, Runnable... threads) {
            return new Round(List.of(threads), check);
        }
    }

    /**
     * Checks that the {@code @Operation}s of {@code test} are linearizable against {@code spec}
     * under Lincheck's model checker ({@code iterations} scenarios of 2 threads, 300 interleavings
     * each).
     */
    public static void linearizableUnderModelChecking(Class<?> test, Class<?> spec, int iterations) {
        new ModelCheckingOptions()
                .iterations(iterations)
                .invocationsPerIteration(300)
                .sequentialSpecification(spec)
                .check(test);
    }

    /**
     * Checks that the {@code @Operation}s of {@code test} are linearizable against {@code spec}
     * under Lincheck's stress mode ({@code iterations} scenarios of 3 threads × 3 operations, 1,000
     * runs each).
     */
    public static void linearizableUnderStress(Class<?> test, Class<?> spec, int iterations) {
        new StressOptions()
                .iterations(iterations)
                .invocationsPerIteration(1_000)
                .threads(3)
                .actorsPerThread(3)
                .sequentialSpecification(spec)
                .check(test);
    }

    /** Explores {@link #INVOCATIONS} interleavings of {@code scenario}; throws on the first failure. */
    public static void explore(Scenario scenario) {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> runOnce(scenario.build()));
    }

    private static void runOnce(Round round) {
        List<Thread> started = new ArrayList<>();
        Throwable[] thrown = new Throwable[round.threads().size()];
        for (int i = 0; i < thrown.length; i++) {
            Runnable body = round.threads().get(i);
            int slot = i;
            Thread t = new Thread(() -> {
                try {
                    body.run();
                } catch (Throwable e) { // a body that expects an exception catches it itself
                    thrown[slot] = e;
                }
            });
            t.start();
            started.add(t);
        }
        for (Thread t : started) {
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError("interrupted while joining " + t, e);
            }
        }
        for (int i = 0; i < thrown.length; i++) {
            if (thrown[i] != null) {
                throw new AssertionError("thread " + i + " threw", thrown[i]);
            }
        }
        round.check().run();
    }
}
