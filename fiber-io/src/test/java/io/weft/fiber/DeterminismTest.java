package io.weft.fiber;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §6: with one worker and a virtual clock, a concurrent program's interleaving and output
 * are identical on every run.
 */
class DeterminismTest {

    /** A randomized concurrent program: tasks that sleep, yield, spawn, await and cancel. */
    static List<String> runProgram(long seed) {
        List<String> trace = new ArrayList<>();
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().seed(seed).build()) {
            io.run(() -> {
                List<Future<Integer>> tasks = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    int id = i;
                    Random random = new Random(seed * 1_000 + id);
                    List<Future<Integer>> earlier = List.copyOf(tasks);
                    tasks.add(Io.async(() -> {
                        int sum = 0;
                        for (int step = 0; step < 6; step++) {
                            trace.add(io.nowMs() + " t" + id + " s" + step);
                            switch (random.nextInt(5)) {
                                case 0 -> Io.sleep(Duration.ofMillis(random.nextInt(20)));
                                case 1 -> Thread.yield();
                                case 2 ->
                                    sum += Io.async(() -> {
                                                Io.sleep(Duration.ofMillis(random.nextInt(5)));
                                                trace.add(io.nowMs() + " child of t" + id);
                                                return 1;
                                            })
                                            .await();
                                case 3 -> {
                                    if (!earlier.isEmpty()) {
                                        try {
                                            sum += earlier.get(random.nextInt(earlier.size()))
                                                    .await();
                                        } catch (Cancelled c) {
                                            trace.add(io.nowMs() + " t" + id + " saw a cancelled task");
                                        }
                                    }
                                }
                                default -> {
                                    if (!earlier.isEmpty() && random.nextInt(4) == 0) {
                                        earlier.get(random.nextInt(earlier.size()))
                                                .cancel();
                                    }
                                }
                            }
                        }
                        trace.add(io.nowMs() + " t" + id + " done " + sum);
                        return sum;
                    }));
                }
                for (Future<Integer> task : tasks) {
                    try {
                        trace.add("result " + task.await());
                    } catch (Cancelled c) {
                        trace.add("result cancelled");
                    }
                }
            });
        }
        return trace;
    }

    @Test
    void oneWorkerOnAVirtualClockRunsTheSameWayEveryTime() {
        List<String> first = runProgram(7);
        assertTrue(first.size() > 200, "the program did real work: " + first.size() + " events");
        assertNotEquals(sortedByTask(first), first, "tasks interleaved (the program is concurrent)");
        for (int run = 1; run < 20; run++) {
            assertEquals(first, runProgram(7), "run " + run + " differed");
        }
    }

    /**
     * More runnable fibers than a run queue holds: the overflow goes through the Injector, whose
     * check interval must then not depend on timing.
     */
    static List<String> runOverflowingProgram() {
        List<String> trace = new ArrayList<>();
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            io.run(() -> {
                List<Future<Integer>> children = new ArrayList<>();
                for (int i = 0; i < 2_000; i++) {
                    int id = i;
                    children.add(Io.async(() -> {
                        trace.add("c" + id);
                        if (id % 3 == 0) {
                            Thread.yield();
                            trace.add("c" + id + " again");
                        }
                        return id;
                    }));
                }
                for (Future<Integer> child : children) {
                    child.await();
                }
            });
        }
        return trace;
    }

    @Test
    void runsThatOverflowIntoTheInjectorAreReproducibleToo() {
        List<String> first = runOverflowingProgram();
        assertEquals(2_000 + 667, first.size());
        for (int run = 1; run < 20; run++) {
            assertEquals(first, runOverflowingProgram(), "run " + run + " differed");
        }
    }

    @Test
    void onFourWorkersAVirtualClockNeverSkipsPastARunnableFiber() {
        try (FiberIo io = FiberIo.builder().workers(4).virtualClock().build()) {
            List<String> late = io.call(() -> {
                List<Future<String>> sleepers = new ArrayList<>();
                Random random = new Random(42);
                for (int i = 0; i < 400; i++) {
                    int id = i;
                    int first = 1 + random.nextInt(50);
                    int second = 1 + random.nextInt(50);
                    sleepers.add(Io.async(() -> {
                        // Each wake-up must happen exactly at its deadline: if the clock jumped to a
                        // later timer while this fiber was runnable, it would see a later time.
                        long start = io.nowMs();
                        Io.sleep(Duration.ofMillis(first));
                        long woke = io.nowMs();
                        Io.sleep(Duration.ofMillis(second));
                        long wokeAgain = io.nowMs();
                        boolean exact = woke == start + first && wokeAgain == woke + second;
                        return exact
                                ? null
                                : "fiber " + id + ": " + start + "+" + first + " -> " + woke + ", +" + second + " -> "
                                        + wokeAgain;
                    }));
                }
                List<String> problems = new ArrayList<>();
                for (Future<String> sleeper : sleepers) {
                    String problem = sleeper.await();
                    if (problem != null) {
                        problems.add(problem);
                    }
                }
                return problems;
            });
            assertEquals(List.of(), late);
        }
    }

    private static List<String> sortedByTask(List<String> trace) {
        List<String> sorted = new ArrayList<>(trace);
        sorted.sort(null);
        return sorted;
    }
}
