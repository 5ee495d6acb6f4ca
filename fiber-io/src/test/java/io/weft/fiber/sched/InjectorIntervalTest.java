package io.weft.fiber.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * How often a busy worker looks at the Injector (Worker.injectorIntervalFor): the number of
 * tasks between two looks is what caps how fast external submissions run while every worker is
 * busy (one fair-share batch per look), so the interval must follow the 200 us target.
 */
class InjectorIntervalTest {

    @Test
    void tasksOfFiveMicrosecondsGetALookEvery40Tasks() {
        // 200 us / 5 us: with 1 ms (the old target) it was 200 tasks, 1 ms between looks
        assertEquals(40, Worker.injectorIntervalFor(5_000));
    }

    @Test
    void shortTasksHitTheUpperClamp() {
        assertEquals(Worker.MAX_INTERVAL, Worker.injectorIntervalFor(100));
        assertEquals(Worker.MAX_INTERVAL, Worker.injectorIntervalFor(0)); // a batch timed at 0 ns
    }

    @Test
    void longTasksHitTheLowerClamp() {
        assertEquals(Worker.MIN_INTERVAL, Worker.injectorIntervalFor(1_000_000));
    }

    @Test
    void theIntervalIsTheTargetLatencyInTasks() {
        assertEquals(Worker.TARGET_INJECTOR_LATENCY_NANOS / 1_000, Worker.injectorIntervalFor(1_000));
    }
}
