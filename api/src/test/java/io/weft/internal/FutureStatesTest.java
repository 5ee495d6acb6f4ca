package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Future.State;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Done futures made from outside, reading outcomes without waiting, and toString. */
class FutureStatesTest {
    private static final Pattern TO_STRING = Pattern.compile("Task#(\\d+)\\[([A-Z]+)(.*)]");

    @Test
    void completedIsDoneWithItsValueEvenNull() {
        Future<String> done = Future.completed("v");
        Future<String> nothing = Future.completed(null);

        assertTrue(done.isDone());
        assertEquals(State.SUCCESS, done.state());
        assertEquals("v", done.resultNow());
        assertEquals("v", done.await());
        assertEquals(State.SUCCESS, nothing.state());
        assertNull(nothing.resultNow());
    }

    @Test
    void failedIsDoneWithTheSameExceptionInstance() {
        IllegalArgumentException failure = new IllegalArgumentException("bad");
        Future<String> future = Future.failed(failure);

        assertTrue(future.isDone());
        assertEquals(State.FAILED, future.state());
        assertSame(failure, future.exceptionNow());
        assertSame(failure, assertThrows(IllegalArgumentException.class, future::await));
    }

    @Test
    void failedWithACheckedExceptionAwaitsAsCompletionExceptionWrappingIt() {
        IOException failure = new IOException("disk");
        Future<String> future = Future.failed(failure);

        assertSame(failure, future.exceptionNow());
        assertSame(
                failure, assertThrows(CompletionException.class, future::await).getCause());
    }

    @Test
    void failedWithCancelledIsCancelled() {
        Cancelled signal = new Cancelled("stop");
        Future<String> future = Future.failed(signal);

        assertEquals(State.CANCELLED, future.state());
        assertSame(signal, assertThrows(Cancelled.class, future::await).getCause());
        assertFalse(future.cancel());
    }

    @Test
    void resultNowThrowsUnlessSucceeded() {
        assertThrows(IllegalStateException.class, pendingTask()::resultNow);
        assertThrows(IllegalStateException.class, Future.failed(new RuntimeException())::resultNow);
        assertThrows(IllegalStateException.class, Future.failed(new Cancelled("c"))::resultNow);
    }

    @Test
    void exceptionNowThrowsUnlessFailed() {
        assertThrows(IllegalStateException.class, pendingTask()::exceptionNow);
        assertThrows(IllegalStateException.class, Future.completed("v")::exceptionNow);
        assertThrows(IllegalStateException.class, Future.failed(new Cancelled("c"))::exceptionNow);
    }

    @Test
    void ofReturnsWeftFuturesAsTasksAndRejectsOthersNamingTheArgument() {
        Future<String> weft = Future.completed("v");
        Future<String> foreign = new ForeignFuture();

        assertSame(weft, Task.of(weft, "a"));
        NullPointerException npe = assertThrows(NullPointerException.class, () -> Task.of(null, "a"));
        assertEquals("a", npe.getMessage());
        IllegalArgumentException iae = assertThrows(IllegalArgumentException.class, () -> Task.of(foreign, "b"));
        assertTrue(iae.getMessage().startsWith("b "), iae.getMessage());
    }

    @Test
    void toStringShowsIdStateAndLiveWaiters() {
        Task<String> task = pendingTask();
        Task<String> other = pendingTask();

        Matcher m = parse(task);
        assertEquals("NEW", m.group(2));
        assertEquals("", m.group(3));
        assertNotEquals(m.group(1), parse(other).group(1), "ids are unique");

        Task.Waiter first = task.addWaiter(() -> {});
        Task.Waiter second = task.addWaiter(() -> {});
        assertEquals(", waiters=2", parse(task).group(3));
        task.removeWaiter(first);
        assertEquals(", waiters=1", parse(task).group(3));
        task.removeWaiter(second);
        assertEquals("", parse(task).group(3));
    }

    @Test
    void toStringShowsEachDoneState() {
        assertEquals("SUCCESS", parse(Task.of(Future.completed("v"), "f")).group(2));
        assertEquals(
                "FAILED",
                parse(Task.of(Future.failed(new RuntimeException()), "f")).group(2));
        assertEquals(
                "CANCELLED",
                parse(Task.of(Future.failed(new Cancelled("c")), "f")).group(2));
    }

    private static Matcher parse(Task<?> task) {
        Matcher m = TO_STRING.matcher(task.toString());
        assertTrue(m.matches(), task.toString());
        return m;
    }

    private static Task<String> pendingTask() {
        return Task.of(Future.from(new CompletableFuture<String>()), "pending");
    }

    /** A Future not made by Weft. */
    private static final class ForeignFuture implements Future<String> {
        @Override
        public String await() {
            return "foreign";
        }

        @Override
        public String await(Duration timeout) {
            return "foreign";
        }

        @Override
        public boolean cancel() {
            return false;
        }

        @Override
        public boolean isDone() {
            return true;
        }

        @Override
        public State state() {
            return State.SUCCESS;
        }

        @Override
        public String resultNow() {
            return "foreign";
        }

        @Override
        public Throwable exceptionNow() {
            throw new IllegalStateException("succeeded");
        }

        @Override
        public io.weft.Registration onDone(Runnable action) {
            action.run();
            return () -> {};
        }

        @Override
        public CompletableFuture<String> toCompletableFuture() {
            return CompletableFuture.completedFuture("foreign");
        }
    }
}
