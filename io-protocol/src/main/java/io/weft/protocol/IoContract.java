package io.weft.protocol;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.TaskProbe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The base of every contract class: a fresh Io per test, and the helpers the contracts share
 * (run code with the Io installed, start a task from another thread, wait until a thread parks).
 * Not thread-safe; JUnit makes one instance per test.
 *
 * <p>An implementation's test suite says what it tests with {@link #subject()}: how to make the Io
 * and whether it runs tasks inline or has a virtual clock. If the Io is {@link AutoCloseable}, it
 * is closed after each test.
 */
public abstract class IoContract {

    /** For the test class of one Io implementation. */
    protected IoContract() {}

    /** How long a contract waits for something that must happen (a park, a completion). */
    protected static final Duration PATIENCE = Duration.ofSeconds(20);

    /** The Io under test, fresh for each test. */
    protected Io io;

    private boolean closed;
    private final List<Thread> helpers = new ArrayList<>();
    private final ConcurrentLinkedQueue<Throwable> helperFailures = new ConcurrentLinkedQueue<>();

    /**
     * Says which Io this suite tests; called before each test.
     *
     * @return the subject, usually a shared constant
     */
    protected abstract IoUnderTest subject();

    /**
     * Creates a fresh Io of the kind under test (the test's own {@link #io}, or a second one).
     *
     * @return a new Io
     */
    protected final Io newIo() {
        return subject().factory().get();
    }

    /**
     * Says whether {@code Io.async} runs the body to completion before returning (as
     * {@code BlockingIo} does). Contracts that need a task which has not started yet skip
     * themselves on such an Io.
     *
     * @return {@code true} for an inline Io
     */
    protected final boolean runsTasksInline() {
        return subject().runsTasksInline();
    }

    /**
     * Says whether the Io's clock is virtual (jumps to the next timer when nothing can run). A
     * few contracts need a timer that does not fire while a helper thread acts; they skip
     * themselves on a virtual clock.
     *
     * @return {@code true} for a virtual clock
     */
    protected final boolean hasVirtualClock() {
        return subject().hasVirtualClock();
    }

    @BeforeEach
    final void createIo() {
        io = newIo();
    }

    @AfterEach
    final void joinHelpersAndCloseIo() throws Exception {
        for (Thread helper : helpers) {
            helper.join(PATIENCE.toMillis());
            if (helper.isAlive()) {
                helperFailures.add(new AssertionError("helper thread " + helper.getName() + " did not finish"));
            }
        }
        closeIo();
        Throwable failure = helperFailures.poll();
        if (failure != null) {
            AssertionError error = new AssertionError("a helper thread failed", failure);
            helperFailures.forEach(error::addSuppressed);
            throw error;
        }
    }

    /**
     * Closes the Io under test now, if it is {@link AutoCloseable} (it is not closed again after
     * the test). Once close returns the Io runs nothing more, so a contract can then check what
     * never happened: a body that has not run by then never will. An Io that cannot be closed is
     * left as it is.
     *
     * @throws Exception what the Io's close throws
     */
    protected final void closeIo() throws Exception {
        if (!closed && io instanceof AutoCloseable closeable) {
            closed = true;
            closeable.close();
        }
    }

    /** A body that may throw anything; run by {@link #helper}. */
    @FunctionalInterface
    protected interface Action {
        /**
         * Runs the action.
         *
         * @throws Exception anything; it fails the test
         */
        void run() throws Exception;
    }

    /**
     * Calls {@code body} with the Io under test installed, as {@code Io.with} does: on this thread
     * under an inline Io, as a root task (this thread waiting) under a scheduling one.
     *
     * @param body the code to call
     * @param <T> the value's type
     * @return what {@code body} returns
     */
    protected final <T> T inIo(Callable<T> body) {
        return Io.with(io).call(body);
    }

    /**
     * Runs {@code body} with the Io under test installed, as {@code Io.with} does (see {@link #inIo}).
     *
     * @param body the code to run
     */
    protected final void runInIo(Runnable body) {
        Io.with(io).run(body);
    }

    /**
     * Calls {@code body} under the Io under test (as {@link #inIo}) while a helper thread named
     * {@code name} waits until the thread running the body has parked, then runs {@code action}:
     * under a scheduling Io the body is a root task on a thread of its own, not the caller.
     *
     * @param name the helper thread's name
     * @param action what the helper does once the body's thread parked
     * @param body the code to call
     * @param <T> the value's type
     * @return what {@code body} returns
     */
    protected final <T> T inIoWhenItParks(String name, Runnable action, Callable<T> body) {
        AtomicReference<Thread> bodyThread = new AtomicReference<>();
        helper(name, () -> {
            eventually().until(() -> bodyThread.get() != null);
            awaitParked(bodyThread.get());
            action.run();
        });
        return inIo(() -> {
            bodyThread.set(Thread.currentThread());
            return body.call();
        });
    }

    /**
     * Starts a plain platform thread running {@code action}; the test fails if it throws, and
     * waits for it to finish.
     *
     * @param name the thread's name
     * @param action what it does
     * @return the started thread
     */
    protected final Thread helper(String name, Action action) {
        Thread thread = Thread.ofPlatform().name(name).daemon().unstarted(() -> {
            try {
                action.run();
            } catch (Throwable t) {
                helperFailures.add(t);
            }
        });
        helpers.add(thread);
        thread.start();
        return thread;
    }

    /**
     * A task started by {@link #startElsewhere}: its future and the thread its body runs on.
     *
     * @param future the task's future
     * @param thread the thread running the task's body
     * @param <T> the value's type
     */
    protected record Started<T>(Future<T> future, Thread thread) {
        /** Waits until the task's thread is parked (for example, at a suspend point). */
        public void awaitParked() {
            IoContract.awaitParked(thread);
        }
    }

    /**
     * Starts {@code body} as a task of the Io under test from a helper thread, and returns once the
     * body has begun. Under an inline Io the helper thread runs the task; either way the calling
     * thread stays free to cancel it, ready it or race it.
     *
     * @param body the task's body
     * @param <T> the value's type
     * @return the started task
     */
    protected final <T> Started<T> startElsewhere(Callable<T> body) {
        AtomicReference<Thread> thread = new AtomicReference<>();
        AtomicReference<Future<T>> handle = new AtomicReference<>();
        helper(
                "task-starter",
                () -> inIo(() -> Io.async(() -> {
                    @SuppressWarnings("unchecked")
                    Future<T> self = (Future<T>) Io.currentTask().orElseThrow();
                    thread.set(Thread.currentThread());
                    handle.set(self);
                    return body.call();
                })));
        eventually().until(() -> handle.get() != null);
        return new Started<>(handle.get(), thread.get());
    }

    /** An Awaitility condition that polls often (every 2 ms) for at most {@link #PATIENCE}. */
    static ConditionFactory eventually() {
        return org.awaitility.Awaitility.await()
                .atMost(PATIENCE)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(2));
    }

    /**
     * Waits until {@code thread} is parked (WAITING or TIMED_WAITING).
     *
     * @param thread the thread to watch
     */
    protected static void awaitParked(Thread thread) {
        eventually().until(() -> {
            Thread.State state = thread.getState();
            return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
        });
    }

    /**
     * Waits until {@code future} is done, whatever its outcome.
     *
     * @param future the future to wait for
     */
    protected static void awaitDone(Future<?> future) {
        eventually().until(future::isDone);
    }

    /**
     * Counts the live waiters registered on {@code future} (parked awaits, races, {@code onDone}
     * actions not yet run nor deregistered): the probe for the contracts on deregistration. It
     * reads Weft's task record, whatever the Io; 0 once the future is done.
     *
     * @param future a future made by Weft
     * @return how many waiters would run if it completed now
     */
    protected static int waiterCount(Future<?> future) {
        return TaskProbe.waiterCount(future);
    }

    /**
     * Parks the current task on a token nobody readies: returns only by throwing (cancellation).
     *
     * @return never
     */
    protected static Void parkUntilCancelled() {
        Io current = Io.current();
        current.suspendRaw(ParkToken.create());
        throw new AssertionError("a park on a token nobody readies returned normally");
    }

    /**
     * Runs {@code body} and returns what it threw, or fails if it returned normally.
     *
     * @param body the code expected to throw
     * @return the exception
     */
    protected static Throwable thrownBy(Callable<?> body) {
        try {
            Object value = body.call();
            throw new AssertionError("expected an exception, got the value " + value);
        } catch (AssertionError e) {
            throw e;
        } catch (Throwable t) {
            return t;
        }
    }
}
