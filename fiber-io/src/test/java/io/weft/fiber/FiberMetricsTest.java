package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link FiberIo#metrics()}: the counters move with what the FiberIo does. */
class FiberMetricsTest {

    /**
     * A worker's busy time only grows. It was read as two fields apart from the worker's own
     * update of them at each park and wake: a snapshot could add an awake period twice, and the
     * next then read less. Workers here park and wake all the time (tasks hand a token to each
     * other across them) while a plain thread takes snapshots.
     */
    @Test
    void aWorkersBusyTimeNeverGoesDown() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            AtomicBoolean stop = new AtomicBoolean();
            List<Future<Object>> players = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                players.add(io.spawn(() -> {
                    while (!stop.get()) {
                        Io.sleep(Duration.ofMillis(1)); // a park and a wake per round
                    }
                    return null;
                }));
            }
            try {
                long[] last = new long[64];
                for (int i = 0; i < 20_000; i++) {
                    FiberMetrics m = io.metrics();
                    for (FiberMetrics.Worker w : m.workers()) {
                        long busy = w.busy().toNanos();
                        assertTrue(
                                busy >= last[w.index()],
                                "worker " + w.index() + ": " + last[w.index()] + " ns, then " + busy);
                        last[w.index()] = busy;
                    }
                }
            } finally {
                stop.set(true);
            }
            for (Future<Object> p : players) {
                p.await();
            }
        }
    }

    /**
     * A snapshot read each worker's ended count next to its submitted one: a job submitted from a
     * plain thread after the shared count was read and ended before its worker's count was, was
     * counted as ended only, so completed could exceed spawned and liveTasks read below the task
     * parked all along. Ends are read before submissions now, as liveTasks() does.
     */
    @Test
    void aSnapshotNeverCountsMoreEndedThanSpawned() throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).build()) {
            CountDownLatch release = new CountDownLatch(1);
            Future<Object> parked = io.spawn(() -> {
                Io.blocking(() -> {
                    release.await();
                    return null;
                });
                return null;
            });
            AtomicBoolean stop = new AtomicBoolean();
            Thread spawner = Thread.ofPlatform().daemon().start(() -> {
                while (!stop.get()) {
                    io.spawn(() -> null);
                }
            });
            try {
                for (int i = 0; i < 20_000; i++) {
                    FiberMetrics m = io.metrics();
                    String counts =
                            "spawned " + m.spawned() + ", completed " + m.completed() + ", live " + m.liveTasks();
                    assertTrue(m.completed() <= m.spawned(), counts);
                    assertTrue(m.liveTasks() >= 1, "the parked task is live: " + counts);
                }
            } finally {
                stop.set(true);
                spawner.join();
                release.countDown();
            }
            parked.await();
        }
    }

    @Test
    void tasksSpawnedCompletedAndCancelledAreCounted() {
        try (FiberIo io = FiberIo.builder()
                .workers(1)
                .name("counted")
                .stallThreshold(Duration.ZERO) // one worker, no spares: the counts are exact
                .build()) {
            FiberMetrics before = io.metrics();
            assertEquals(0, before.spawned());
            assertEquals("counted", before.io());
            io.run(() -> {
                List<Future<Integer>> parts = new ArrayList<>();
                for (int i = 0; i < 100; i++) {
                    int n = i;
                    parts.add(Io.async(() -> n));
                }
                List<Future<Integer>> cancelled = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    cancelled.add(Io.async(() -> 0));
                }
                cancelled.forEach(Future::cancel); // not started: cancelled before they run
                Io.sleep(
                        Duration.ofMillis(1)); // the worker runs the parts (awaited unstarted, they would run in place)
                for (Future<Integer> part : parts) {
                    part.await();
                }
            });
            // a worker counts a task's end, then its poll: wait for both
            await().until(() -> io.liveTasks() == 0 && io.metrics().polls() >= 101);
            FiberMetrics after = io.metrics();
            assertEquals(106, after.spawned(), after::toString); // the root task, 100 parts, 5 cancelled
            assertEquals(106, after.completed(), after::toString);
            assertEquals(0, after.liveTasks());
            assertEquals(5, after.cancelled(), after::toString);
            FiberMetrics.Worker worker = after.workers().get(0);
            assertTrue(worker.polls() >= 101, after::toString);
            assertTrue(worker.lifoHits() >= 1, after::toString); // the first spawn took the slot
            assertTrue(after.polls() == worker.polls());
        }
    }

    /**
     * A poll is a task run to its end on a runner fiber, or a mount that ended none. A mount that
     * ended a task was counted twice (by the task's end and by the mount), so a task that yields
     * once read as about three polls (595 for 200 tasks here): the count ran high,
     * and the budget (timers, the shared queue) came around after fewer tasks than it should.
     */
    @Test
    void aResumedTaskThatEndsIsOnePoll() {
        int tasks = 200;
        try (FiberIo io = FiberIo.builder()
                .workers(1)
                .name("polls")
                .stallThreshold(Duration.ZERO) // one worker, no spares: the counts are exact
                .build()) {
            io.run(() -> {}); // the runner pool is warm
            await().until(() -> io.liveTasks() == 0);
            long before = io.metrics().polls();
            for (int i = 0; i < tasks; i++) {
                io.spawn(() -> {
                    Io.yield(); // one mount up to here, one from here to the end
                    return null;
                });
            }
            // a worker counts a task's end, then its poll: wait for both
            await().until(() -> io.liveTasks() == 0 && io.metrics().polls() - before >= tasks);
            long polls = io.metrics().polls() - before;
            // each task: its end, and its first mount unless that mount ended another task first
            assertTrue(polls <= 2L * tasks, polls + " polls for " + tasks + " tasks that yield once");
        }
    }

    @Test
    void theSharedQueueDepthAndArmedTimersAreSeen() throws Exception {
        try (FiberIo io = FiberIo.builder()
                .workers(1)
                .name("queued")
                .stallThreshold(Duration.ZERO) // the spinner must hold the only worker
                .build()) {
            CountDownLatch holding = new CountDownLatch(1);
            AtomicBoolean release = new AtomicBoolean();
            io.spawn(() -> {
                holding.countDown();
                while (!release.get()) {
                    Thread.onSpinWait(); // holds the only worker
                }
                return null;
            });
            holding.await();
            for (int i = 0; i < 10; i++) {
                io.spawn(() -> null); // from a plain thread: the shared queue
            }
            assertEquals(10, io.metrics().injectorDepth());
            release.set(true);
            await().until(() -> io.metrics().injectorDepth() == 0 && io.liveTasks() == 0);
            assertTrue(io.metrics().workers().get(0).injectorBatches() >= 1);

            io.spawn(() -> {
                Io.sleep(Duration.ofDays(1));
                return null;
            });
            await().until(() -> io.metrics().timersArmed() == 1);
            await().until(() -> io.metrics().workers().get(0).parks() >= 1);
            FiberMetrics idle = io.metrics();
            assertTrue(idle.workers().get(0).busy().toNanos() > 0, idle::toString);
        }
    }

    @Test
    void aWorkerThatTakesTasksFromAnotherCountsSteals() {
        try (FiberIo io = FiberIo.builder().workers(2).name("stolen").build()) {
            io.run(() -> {
                List<Future<String>> parts = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    parts.add(Io.async(() -> Thread.currentThread().getName()));
                }
                // this task keeps its worker busy (it computes: no spare for it) until the parts are
                // done: only the other worker, stealing them, can run them
                while (!parts.stream().allMatch(Future::isDone)) {
                    Thread.onSpinWait();
                }
            });
            // the counts land a moment after the tasks' ends are seen (counted after completion)
            await().until(() -> io.metrics().steals() >= 1 && io.metrics().polls() >= 51);
            FiberMetrics m = io.metrics();
            assertTrue(m.workers().stream().anyMatch(w -> w.steals() >= 1 && w.polls() >= 1), m::toString);
        }
    }

    @Test
    void aWorkerThatRanTasksSpinsForAWhileThenParks() {
        try (FiberIo io = FiberIo.builder().workers(2).name("spun").build()) {
            for (int round = 0; round < 50; round++) {
                io.call(() -> {
                    List<Future<Integer>> parts = new ArrayList<>();
                    for (int i = 0; i < 200; i++) {
                        parts.add(Io.async(() -> 1)); // the other worker steals some: both run tasks
                    }
                    int sum = 0;
                    for (Future<Integer> part : parts) {
                        sum += part.await();
                    }
                    return sum;
                });
            }
            FiberMetrics before = io.metrics();
            // A worker that ran something stays awake a while for more (Worker, "Spinning"), then
            // parks; an idle one parks again after every park timeout. A worker that spun forever
            // would never park again.
            await().until(() -> {
                FiberMetrics now = io.metrics();
                for (int i = 0; i < 2; i++) {
                    if (now.workers().get(i).parks() <= before.workers().get(i).parks()) {
                        return false;
                    }
                }
                return true;
            });
        }
    }
}
