package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.ParkClock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A parked fiber's age (ParkToken.age, what FiberDump reports) stays true to about a millisecond
 * whether its park read the clock or the tick a stall watch keeps (ParkClock).
 */
class ParkClockTest {
    /**
     * How far an age may read long: a stale tick and a stamp are each about one unit (~1 ms), and
     * on a busy machine the watch's thread may run late; a tick nobody refreshes would be 200 ms old.
     */
    private static final long SLACK_NANOS = Duration.ofMillis(20).toNanos();

    @Test
    void theDefaultStallWatchKeepsTheTickAndAParkedFibersAgeIsTrue() {
        int before = ParkClock.keepers();
        try (FiberIo io = FiberIo.builder().workers(1).name("kept").build()) {
            await().until(() -> ParkClock.keepers() == before + 1); // the watch thread registers as it starts
            assertAgeIsTrue(io);
        }
        assertEquals(before, ParkClock.keepers()); // close() joined the watch, which released as it ended
    }

    @Test
    void withTheWatchOffAParkReadsTheClockAndTheAgeIsTrue() {
        int before = ParkClock.keepers();
        try (FiberIo io = oneWorker("unkept", Duration.ZERO)) {
            assertEquals(before, ParkClock.keepers());
            assertAgeIsTrue(io);
        }
    }

    @Test
    void aWatchWithALongPeriodIsNoKeeper() {
        int before = ParkClock.keepers();
        try (FiberIo io = oneWorker("slow-watch", Duration.ofMillis(50))) {
            // the watch thread starts on its own: watch the count for a while, not once
            await().during(Duration.ofMillis(50)).until(() -> ParkClock.keepers() == before);
            assertAgeIsTrue(io);
        }
    }

    @Test
    void closingOneFiberIoLeavesTheOtherKeepingTheTick() {
        int before = ParkClock.keepers();
        try (FiberIo kept = FiberIo.builder().workers(1).name("stays").build()) {
            FiberIo closed = FiberIo.builder().workers(1).name("goes").build();
            await().until(() -> ParkClock.keepers() == before + 2);
            closed.close();
            assertEquals(before + 1, ParkClock.keepers()); // close() joined its watch, which released
            assertAgeIsTrue(kept);
        }
    }

    /**
     * Lets 200 ms pass first (a tick nobody refreshes would be that stale by then; the test waits
     * for time itself, which is what it checks), then parks a fiber and checks that its age, once it
     * reads 20 ms, is no longer than the time since the park began, give or take SLACK_NANOS.
     */
    private static void assertAgeIsTrue(FiberIo io) {
        long start = System.nanoTime();
        await().pollInterval(Duration.ofMillis(1))
                .until(() -> System.nanoTime() - start >= Duration.ofMillis(200).toNanos());
        AtomicReference<ParkToken> parked = new AtomicReference<>();
        long beforePark = System.nanoTime();
        io.spawn(() -> {
            ParkToken token = ParkToken.create("the test");
            parked.set(token);
            Io.current().suspendRaw(token);
            return null;
        });
        await().until(() -> parked.get() != null && parked.get().age().compareTo(Duration.ofMillis(20)) >= 0);
        Duration age = parked.get().age();
        long elapsed = System.nanoTime() - beforePark;
        assertTrue(
                age.toNanos() <= elapsed + SLACK_NANOS,
                "the age " + age + " reads longer than the " + Duration.ofNanos(elapsed) + " since the park began");
        io.ready(parked.get());
        await().until(() -> io.liveTasks() == 0);
    }

    /** A one-worker FiberIo named {@code name} whose stall watch has {@code threshold} (zero: off). */
    private static FiberIo oneWorker(String name, Duration threshold) {
        return FiberIo.builder().workers(1).name(name).stallThreshold(threshold).build();
    }
}
