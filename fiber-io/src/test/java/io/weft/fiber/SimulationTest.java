package io.weft.fiber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;

/** Issue 12, part 4: seeds explore legal interleavings; a failing seed replays. */
class SimulationTest {

    /** Ten tasks that all wake at 10 ms and then hand work to each other; the trace is their order. */
    private static List<String> tiesAndHandOffs() {
        List<String> trace = new ArrayList<>();
        List<Future<?>> tasks = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String name = "t" + i;
            tasks.add(Io.async(() -> {
                Io.sleep(Duration.ofMillis(10));
                synchronized (trace) {
                    trace.add(name);
                }
                Future<?> child = Io.async(() -> {
                    synchronized (trace) {
                        return trace.add(name + "'");
                    }
                });
                Io.sleep(Duration.ofMillis(1));
                return child.await();
            }));
        }
        for (Future<?> task : tasks) {
            task.await();
        }
        return trace;
    }

    @Test
    void theSameSeedGivesTheSameRunAndDifferentSeedsExploreOthers() {
        Set<List<String>> bySeed = new HashSet<>();
        for (long seed = 0; seed < 20; seed++) {
            List<String> first = Simulation.replay(seed, SimulationTest::tiesAndHandOffs);
            List<String> again = Simulation.replay(seed, SimulationTest::tiesAndHandOffs);
            assertEquals(first, again, "seed " + seed + " replays");
            bySeed.add(first);
        }
        assertTrue(bySeed.size() >= 5, "20 seeds gave only " + bySeed.size() + " interleavings");
    }

    /**
     * A planted ordering bug: the program assumes that of two tasks waking at the same instant, the
     * one armed first runs first. A fixed order (arming order, what a FiberIo does without
     * explore) never shows it; the explorer finds a seed that does, and that seed replays it.
     */
    @Test
    void theExplorerFindsAPlantedOrderingBugThatAFixedSeedMisses() {
        Callable<String> assumesArmingOrder = () -> {
            List<String> order = new ArrayList<>();
            Future<?> first = Io.async(() -> {
                Io.sleep(Duration.ofMillis(5));
                synchronized (order) {
                    return order.add("first");
                }
            });
            Future<?> second = Io.async(() -> {
                Io.sleep(Duration.ofMillis(5));
                synchronized (order) {
                    return order.add("second");
                }
            });
            first.await();
            second.await();
            if (!order.equals(List.of("first", "second"))) {
                throw new IllegalStateException("the planted bug: ran in the order " + order);
            }
            return "ok";
        };
        for (int run = 0; run < 20; run++) {
            try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
                assertEquals("ok", Io.with(io).call(assumesArmingOrder), "a fixed order never shows it");
            }
        }
        Simulation.Failure found =
                assertThrows(Simulation.Failure.class, () -> Simulation.explore(50, assumesArmingOrder));
        assertInstanceOf(IllegalStateException.class, found.getCause());
        assertTrue(found.getMessage().contains("seed " + found.seed()), found.getMessage());
        IllegalStateException replayed =
                assertThrows(IllegalStateException.class, () -> Simulation.replay(found.seed(), assumesArmingOrder));
        assertEquals(found.getCause().getMessage(), replayed.getMessage());
    }

    @Test
    void badInputIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Simulation.explore(0, () -> null));
        assertThrows(NullPointerException.class, () -> Simulation.explore(1, null));
        assertThrows(NullPointerException.class, () -> Simulation.replay(1, null));
    }
}
