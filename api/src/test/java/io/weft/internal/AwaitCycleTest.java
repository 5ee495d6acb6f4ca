package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future.State;
import io.weft.Io;
import io.weft.TimedOut;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** Awaits that could never finish fail with a message instead of hanging. */
class AwaitCycleTest {
    private static final Duration JOIN = Duration.ofSeconds(10);

    @Test
    void aTaskAwaitingItsOwnFutureFailsInsteadOfHanging() {
        DeferredIo io = new DeferredIo();
        Task<Object> task = io.async(() -> Io.currentTask().orElseThrow().await());
        io.runAll();

        assertEquals(State.FAILED, task.state());
        assertInstanceOf(IllegalStateException.class, task.exceptionNow());
    }

    @Test
    void twoTasksAwaitingEachOtherFailInsteadOfHanging() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        AtomicReference<Task<String>> second = new AtomicReference<>();
        Task<String> first = io.async(() -> second.get().await());
        second.set(io.async(first::await));
        Thread firstRunner = io.runNextOnNewThread("first");
        DeferredIo.awaitParkedOnToken(firstRunner); // first awaits second, which has not started

        assertTrue(io.runNext()); // second awaits first: closes the cycle
        assertTrue(firstRunner.join(JOIN), "the task left in the cycle was not released");

        Throwable cycle = second.get().exceptionNow();
        assertInstanceOf(IllegalStateException.class, cycle);
        assertTrue(cycle.getMessage().contains("await cycle"), cycle.getMessage());
        assertSame(cycle, first.exceptionNow(), "first reports what second failed with");
    }

    /**
     * A timed await ends by itself, so it closes no deadlock: a cycle through it is not reported;
     * the timeout breaks it.
     */
    @Test
    void aCycleThroughATimedAwaitIsNotADeadlockTheTimeoutBreaksIt() throws InterruptedException {
        DeferredIo io = new DeferredIo();
        AtomicReference<Task<String>> second = new AtomicReference<>();
        Task<String> first = io.async(() -> second.get().await());
        second.set(io.async(() -> {
            try {
                return first.await(Duration.ofMillis(10));
            } catch (TimedOut gaveUp) {
                return "gave up";
            }
        }));
        Thread firstRunner = io.runNextOnNewThread("first");
        DeferredIo.awaitParkedOnToken(firstRunner);
        Thread secondRunner = io.runNextOnNewThread("second");
        Awaitility.await()
                .atMost(JOIN)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> second.get().isDone() || DeferredIo.isParkedOnToken(secondRunner));
        assertEquals(
                State.PENDING,
                second.get().state(),
                () -> "the timed await did not wait: "
                        + (second.get().state() == State.FAILED ? second.get().exceptionNow() : second.get()));

        io.advance(10);
        assertTrue(secondRunner.join(JOIN));
        assertTrue(firstRunner.join(JOIN));
        assertEquals("gave up", second.get().resultNow());
        assertEquals("gave up", first.resultNow());
    }
}
