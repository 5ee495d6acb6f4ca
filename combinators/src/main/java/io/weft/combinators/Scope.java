package io.weft.combinators;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimedOut;
import io.weft.combinators.internal.Deadlines;
import io.weft.internal.CancelScope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A structured scope: the tasks it {@linkplain #fork forks} (its children) never outlive it. Two
 * shapes: the block form {@link #call(Block)} (kotlinx's {@code coroutineScope}), and open, fork,
 * join, close in a try-with-resources block (the shape of
 * {@link java.util.concurrent.StructuredTaskScope}).
 *
 * {@snippet :
 * Page page = Scope.call(scope -> {
 *     Future<User> user = scope.fork(() -> findUser(id));
 *     Future<List<Order>> orders = scope.fork(() -> fetchOrders(id));
 *     scope.join();                       // waits for both; rethrows the first failure
 *     return new Page(user.resultNow(), orders.resultNow());
 * });                                     // joins and closes: nothing forked outlives the block
 *
 * try (Scope scope = Scope.open()) {      // the same, as a resource
 *     Future<User> user = scope.fork(() -> findUser(id));
 *     scope.join();
 *     return user.resultNow();
 * }                                       // close: cancels and waits for anything left
 * }
 *
 * <h2>Policies</h2>
 * <ul>
 *   <li>{@link #open()} and {@link #call(Block)} are <b>fail-fast</b>: the first child to fail
 *       (end with an exception other than a cancellation: {@link Cancelled}, or any
 *       {@link java.util.concurrent.CancellationException} its body threw, such as a
 *       {@code join} of a cancelled CompletableFuture) cancels every other child and the
 *       owner; later forks are not run (they return an already-cancelled future).
 *   <li>{@link #supervisor()} <b>collects</b>: children do not affect each other or the owner,
 *       {@code join()} returns normally, the failures are in {@link #failures()}, and each
 *       failure nobody observed (by awaiting the child or reading {@code failures()}) goes to an
 *       uncaught-exception handler when the scope closes.
 * </ul>
 * A child that ends cancelled (because the scope or someone holding its future cancelled it, or
 * its body threw a CancellationException) is not a failure under either policy.
 *
 * <h2>The owner is cancelled too, for as long as the scope lasts</h2>
 * When a fail-fast scope's child fails, or a scope's deadline ({@link #call(Duration, Block)})
 * passes, the owner's next suspend point inside the scope throws {@link Cancelled} (whose cause
 * is the failure, or the {@link TimedOut}); a sleeping owner wakes at once. That cancellation
 * belongs to the scope: {@code join} or {@code close} turns it into the outcome and ends it, and
 * after the scope the owner runs on uncancelled. What comes out:
 * <ul>
 *   <li>a child failed: the first failure, the same instance (a checked one wrapped in
 *       {@link CompletionException}), with every other failure added as suppressed;
 *   <li>the deadline passed: a {@link TimedOut}, with any failures suppressed;
 *   <li>the owner itself was cancelled (its own task cancelled, a plain owner interrupted, an
 *       enclosing scope stopped): {@code join} cancels the children, waits for them, and rethrows
 *       that {@link Cancelled} with the children's failures suppressed.
 * </ul>
 * The block form always delivers that outcome. In try-with-resources, Java keeps the block's own
 * exception: if the owner was at a suspend point outside {@code join} when the scope stopped, the
 * block exits with that {@code Cancelled}, whose cause is the failure; {@code close} adds a
 * {@link CompletionException} wrapping the failure (the other failures suppressed on it), not the
 * failure itself, which could be the very exception unwinding the block (self-suppression is
 * illegal). The same wrapper comes out of {@code close} when the failed child was awaited (by
 * the owner or anyone) or {@link #failures()} handed it out, and {@code join} did not throw it:
 * the failure is never dropped, even if the owner swallowed what it got. Shielded code ({@link Io#shield}) is not cancelled by
 * the scope, and the scope does not interrupt an owner blocked in a JDK call (only
 * {@link Future#cancel()} does): it learns at its next suspend point. Code running above the
 * owner on its stack (an inline child under BlockingIo, a task run in place by an await) is
 * inside the scope and stopped with it.
 *
 * <h2>Who is cancelled when</h2>
 * <ul>
 *   <li>Fail-fast, a child fails: every other unfinished child, and the owner (above).
 *   <li>The deadline passes: every child (each at its own next suspend point) and the owner.
 *   <li>The owner task is cancelled: every unfinished child, when the owner reaches {@code join}
 *       or {@code close}.
 *   <li>{@link #close()}: every unfinished child, then waits (shielded) until all have unwound.
 * </ul>
 *
 * <h2>Confinement</h2>
 * A scope belongs to the task that opened it (or the plain thread, outside any task): only the
 * owner may {@code fork}, {@code join} and {@code close}; others get a
 * {@link WrongThreadException}. Children cannot fork into their parent's scope; they open their
 * own. {@link #failures()} may be read by anyone. The scope's guarantee holds if it is closed, so
 * use the block form or try-with-resources.
 */
public final class Scope implements AutoCloseable {
    /*
     * Implementation notes.
     *
     * State:
     *   lock      - guards children, failures (+ failedChildren), shutDown, closed, reported, seen.
     *               Never held while calling into a future (cancel may complete a not-yet-started
     *               child and run its onDone action, which takes the lock again) or while suspending.
     *   children  - unfinished children; the owner adds (fork), each child's onDone action
     *               removes itself. Closing/shutting down cancels a snapshot.
     *   pending   - forked and not yet done; incremented by the owner before spawning,
     *               decremented by the child's onDone action AFTER recording a failure, so
     *               pending == 0 means every outcome is recorded. Exactly once per child: the
     *               action decrements only if it took the child out of children. A fork whose
     *               bookkeeping threw after the spawn (no memory) cancels the child, waits for
     *               it, and decrements itself if the child was never added or if it, not the
     *               action, took it out (forget); else close would wait for good.
     *   joiner    - the owner's current (Io, ParkToken) while it waits in join/close; written
     *               by the owner, read by onDone actions, both volatile (seq_cst). The owner
     *               publishes the token then re-reads pending; an action decrements pending then
     *               reads the token: at least one sees the other, so no wake-up is lost.
     *               Tokens are one-shot: the owner parks on a fresh one each round.
     *   ownerStop - a CancelScope of the owner (api internal), opened with the scope: the first
     *               failure cancels it (fail-fast), its deadline stops it by itself. Its cause is
     *               the scope's outcome. join (when stopped) and close end it, so the owner's
     *               cancellation ends with the scope. The block form also ends it once its
     *               join returned normally: every child finished in time, and a deadline that
     *               passes before close looks is not the block's (it was a spurious TimedOut).
     *               The owner's own cancel is separate: the CancelScope tells the two apart
     *               (ownerCancelledOtherwise).
     *   reported  - failures[0, reported) were thrown or added as suppressed (owner only changes it);
     *   seen      - failures[0, seen) were handed out by failures() (a supervisor does not report them).
     *
     * Fail-fast shutdown: the failing child's onDone action sets shutDown under the lock, cancels
     * the snapshot outside it, then stops the owner. fork checks shutDown under the lock before
     * spawning, and again after adding the child (a sibling may fail in between): a child added
     * before the snapshot is in it; one added after sees shutDown and is cancelled by fork.
     *
     * Deadline: the owner's CancelScope has it; every child runs inside a CancelScope of its own
     * with the same deadline (a timer per child, so a parked child wakes at it even while the
     * owner computes), and ends cancelled, not failed. The owner, once it sees the deadline in
     * join or close, also cancels the children that are left.
     *
     * Owner cancellation: join starts with a checkpoint and waits with suspendRaw, so either
     * cancellation surfaces there as Cancelled; then the scope's outcome (or the owner's own
     * Cancelled) is thrown after the children have unwound. close waits shielded from the start.
     *
     * Alternative not taken: a watcher task per scope that awaits the owner. It would cost a task
     * and could not see a cancellation before it takes effect anyway (cancel is cooperative).
     */

    /**
     * The body of a block-form scope: gets the open scope, forks into it, returns the block's value.
     *
     * @param <T> the value type
     */
    @FunctionalInterface
    public interface Block<T> {
        /**
         * Runs the block.
         *
         * @param scope the open scope (owned by the caller)
         * @return the block's value
         * @throws Exception anything; a checked exception comes out wrapped in
         *     {@link CompletionException}
         */
        T run(Scope scope) throws Exception;
    }

    /** The two join policies. */
    private enum Policy {
        FAIL_FAST,
        SUPERVISOR
    }

    /** The owner's park while it waits for children. */
    private record Joiner(Io io, ParkToken token) {}

    private final Policy policy;
    private final Future<?> ownerTask; // null when opened by a plain thread
    private final Thread ownerThread;
    private final Thread.UncaughtExceptionHandler handler; // a supervisor's; null: the Io's, else the thread's
    private final Io clock; // the deadline's clock, or null without a deadline
    private final long deadlineMs;
    private final TimedOut timedOut; // the deadline's outcome, or null without a deadline
    private final CancelScope ownerStop;
    private final ReentrantLock lock = new ReentrantLock();
    private final Set<Future<?>> children = new LinkedHashSet<>(); // guarded by lock
    private final List<Throwable> failures = new ArrayList<>(); // guarded by lock
    private final List<Future<?>> failedChildren = new ArrayList<>(); // guarded by lock, parallel to failures
    private boolean shutDown; // guarded by lock
    private boolean closed; // guarded by lock
    private int reported; // guarded by lock
    private int seen; // guarded by lock
    private boolean outcomeThrown; // owner only: join/close threw the outcome, or attached to the one out there
    private Throwable outcomeAtClose; // owner only: the outcome as finish() saw it, before ending ownerStop
    private final AtomicInteger pending = new AtomicInteger();
    private volatile Joiner joiner;

    /** Tests only: run by fork under the lock before it records a child; it may throw, as an add with no memory left does. */
    static volatile Runnable beforeChildRecorded;
    /** Tests only: run by fork after it registered a child's onDone action; it may throw, as that call's allocation may. */
    static volatile Runnable afterChildWatched;
    /** Tests only: run by a child's onDone action under the lock before it records the child's failure; it may throw. */
    static volatile Runnable beforeFailureRecorded;
    /** Tests only: run by the block form after the block's join returned normally, before the scope's deadline is ended. */
    static volatile Runnable afterBlockJoined;

    private Scope(Policy policy, Duration timeout, Thread.UncaughtExceptionHandler handler) {
        this.policy = policy;
        this.handler = handler;
        this.ownerTask = Io.currentTask().orElse(null);
        this.ownerThread = Thread.currentThread();
        if (timeout == null) {
            this.clock = null;
            this.deadlineMs = Io.NO_DEADLINE;
            this.timedOut = null;
            this.ownerStop = CancelScope.open();
        } else {
            this.clock = Io.current();
            this.deadlineMs = Deadlines.after(clock.nowMs(), timeout);
            this.timedOut = new TimedOut("the scope's deadline passed (" + timeout + " after it opened)");
            this.ownerStop = CancelScope.open(clock, deadlineMs, timedOut);
            if (!timeout.isPositive()) {
                // no time at all: over now, not when the clock has passed the deadline (CancelScope's notes)
                ownerStop.cancel(timedOut);
            }
        }
    }

    /**
     * Opens a fail-fast scope owned by the calling task (or plain thread): the first failing
     * child cancels its siblings and the owner, and its failure surfaces from {@link #join()} or
     * {@link #close()}.
     *
     * @return a new open scope
     */
    public static Scope open() {
        return new Scope(Policy.FAIL_FAST, null, null);
    }

    /**
     * Opens a supervisor scope owned by the calling task (or plain thread): children fail
     * independently, {@link #join()} returns normally, the failures are in {@link #failures()},
     * and {@link #close()} reports each failure nobody observed to the installed Io's
     * {@linkplain Io#uncaughtExceptionHandler() handler}, else the closing thread's.
     *
     * @return a new open scope
     */
    public static Scope supervisor() {
        return new Scope(Policy.SUPERVISOR, null, null);
    }

    /**
     * Opens a supervisor scope that reports the failures nobody observed to {@code handler} when
     * it closes (called on the closing thread; an exception it throws is ignored).
     *
     * @param handler where unobserved failures go
     * @return a new open scope
     * @throws NullPointerException if {@code handler} is null
     */
    public static Scope supervisor(Thread.UncaughtExceptionHandler handler) {
        return new Scope(Policy.SUPERVISOR, null, Objects.requireNonNull(handler, "handler"));
    }

    /**
     * Runs {@code block} in a new fail-fast scope, then joins and closes it: kotlinx's
     * {@code coroutineScope}. Returns the block's value once every child has finished; if a child
     * failed, throws its failure (the same instance, a checked one wrapped in
     * {@link CompletionException}) with the other failures suppressed, even if the failure
     * reached the block as {@link Cancelled} at a suspend point; after it, the caller is not
     * cancelled. If the caller itself is cancelled, the children are cancelled and waited for, and
     * its {@code Cancelled} comes out with their failures suppressed. If the block throws, the
     * children are cancelled and waited for, and the block's exception comes out.
     *
     * @param block the body; gets the scope
     * @param <T> the value type
     * @return the block's value
     * @throws NullPointerException if {@code block} is null
     */
    public static <T> T call(Block<T> block) {
        Objects.requireNonNull(block, "block");
        return new Scope(Policy.FAIL_FAST, null, null).runBlock(block);
    }

    /**
     * {@link #call(Block)} with a deadline: {@code timeout} after the call on the installed Io's
     * clock, the whole block is cancelled (the owner and every child, each at its next suspend
     * point), and once the children have unwound a {@link TimedOut} comes out (with any child
     * failures suppressed). A zero or negative timeout has already passed: forks are not run.
     *
     * {@snippet :
     * Quote best = Scope.call(Duration.ofMillis(200), scope -> {
     *     Future<Quote> a = scope.fork(() -> quoteFrom(east));
     *     Future<Quote> b = scope.fork(() -> quoteFrom(west));
     *     scope.join();
     *     return cheaper(a.resultNow(), b.resultNow());
     * });                                     // TimedOut if both were not in within 200 ms
     * }
     *
     * @param timeout how long the block may take
     * @param block the body; gets the scope
     * @param <T> the value type
     * @return the block's value
     * @throws TimedOut if the deadline passed before the block and its children were done
     * @throws NullPointerException if an argument is null
     */
    public static <T> T call(Duration timeout, Block<T> block) {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(block, "block");
        return new Scope(Policy.FAIL_FAST, timeout, null).runBlock(block);
    }

    private <T> T runBlock(Block<T> block) {
        T value;
        try {
            value = block.run(this);
            if (!isClosed()) {
                join();
                runHook(afterBlockJoined);
                ownerStop.end(); // every child is done in time: a deadline crossed before close is not the block's
            }
        } catch (Throwable t) {
            throw closeAfter(t);
        }
        close();
        return value;
    }

    /**
     * Starts {@code body} as a child task ({@link Io#async} on the installed Io) and returns its
     * future. Forking is not a suspend point. In a fail-fast scope that has already seen a
     * failure, or a scope past its deadline, the body is not run and the returned future is
     * already cancelled.
     *
     * @param body the child's body
     * @param <T> the value type
     * @return the child's future
     * @throws IllegalStateException if the scope is closed
     * @throws WrongThreadException if the caller is not the scope's owner
     * @throws NullPointerException if {@code body} is null
     */
    public <T> Future<T> fork(Callable<T> body) {
        Objects.requireNonNull(body, "body");
        requireOwner("fork");
        Throwable stoppedBy = ownerStop.cause();
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("fork after close: " + this);
            }
            if (shutDown || stoppedBy != null) {
                return Future.failed(new Cancelled(
                        "not started: the scope " + (shutDown ? "already failed" : "passed its deadline"), stoppedBy));
            }
            pending.incrementAndGet();
        } finally {
            lock.unlock();
        }
        Future<T> child;
        try {
            child = Io.async(clock == null ? body : () -> withinDeadline(body));
        } catch (RuntimeException | Error spawnFailed) {
            pending.decrementAndGet();
            throw spawnFailed;
        }
        boolean recorded = false;
        boolean cancelNow;
        try {
            lock.lock();
            try {
                runHook(beforeChildRecorded);
                children.add(child);
                recorded = true;
                cancelNow = shutDown;
            } finally {
                lock.unlock();
            }
            child.onDone(() -> childDone(child));
            runHook(afterChildWatched);
        } catch (RuntimeException | Error bookkeepingFailed) {
            forget(child, recorded);
            throw bookkeepingFailed;
        }
        if (cancelNow) {
            child.cancel();
        }
        return child;
    }

    /**
     * fork's way out when its bookkeeping threw after the spawn (no memory for the set's entry or
     * the onDone node): the child is cancelled and waited for, so it does not outlive the fork
     * that failed, and it is counted done exactly once. Unrecorded, no onDone action was
     * registered, so the count is this method's to drop. Recorded, the onDone action may or may
     * not have been registered: whichever of the two takes the child out of the set drops it.
     */
    private void forget(Future<?> child, boolean recorded) {
        child.cancel();
        Watch.joinShielded(child);
        boolean mine = !recorded;
        if (recorded) {
            lock.lock();
            try {
                mine = children.remove(child);
            } finally {
                lock.unlock();
            }
        }
        if (mine) {
            pending.decrementAndGet();
        }
    }

    private static void runHook(Runnable hook) {
        if (hook != null) {
            hook.run();
        }
    }

    /** A child's body under the scope's deadline: its suspend points throw once it passes. */
    private <T> T withinDeadline(Callable<T> body) throws Exception {
        CancelScope limit = CancelScope.open(clock, deadlineMs, timedOut);
        try {
            return body.call();
        } finally {
            limit.end();
        }
    }

    /** A child's onDone action: record its failure, maybe shut down, count it, wake the owner. */
    private void childDone(Future<?> child) {
        Throwable failure = null;
        List<Future<?>> toCancel = List.of();
        boolean stopOwner = false;
        boolean counted = false; // this action took the child out, so it counts it done
        try {
            lock.lock();
            try {
                if (!children.remove(child)) {
                    return; // a fork whose bookkeeping failed took it out and counted it (forget)
                }
                counted = true;
                failure = CancelScope.peekFailure(child); // recording it is not observing it
                if (failure != null) {
                    if (policy == Policy.FAIL_FAST && !shutDown) {
                        shutDown = true; // decided before anything here allocates: it holds even without memory
                        stopOwner = true;
                    }
                    runHook(beforeFailureRecorded);
                    failedChildren.add(child);
                    try {
                        failures.add(failure);
                    } catch (Throwable noMemory) {
                        failedChildren.removeLast(); // the two lists stay parallel
                        throw noMemory;
                    }
                    if (stopOwner) {
                        toCancel = List.copyOf(children);
                    }
                }
            } finally {
                lock.unlock();
            }
            Watch.cancelAll(toCancel);
        } finally {
            // whatever threw above (no memory to record the failure or copy the siblings): the
            // owner is still stopped with the failure, and the child counted, else join waits for good
            try {
                if (stopOwner) {
                    ownerStop.cancel(failure); // its wake-up may itself throw (no memory)
                }
            } finally {
                if (counted) {
                    pending.decrementAndGet();
                    Joiner waiting = joiner;
                    if (waiting != null) {
                        waiting.io().ready(waiting.token());
                    }
                }
            }
        }
    }

    /**
     * Waits until every child forked so far is done; a suspend point. Returns normally unless the
     * scope stopped or the owner is cancelled:
     * <ul>
     *   <li>fail-fast, a child failed: throws the first failure (an unchecked one as it is, a
     *       checked one wrapped in {@link CompletionException}) with the others suppressed;
     *   <li>the deadline passed: cancels the children, waits for them, throws {@link TimedOut};
     *   <li>the owner is cancelled (on entry or while waiting): cancels every unfinished child,
     *       waits (shielded) for them to unwind, then throws that {@link Cancelled} with the
     *       children's failures suppressed.
     * </ul>
     * In the first two cases the scope's cancellation of the owner ends here. A supervisor's
     * failures stay in {@link #failures()}. May be called again after more forks.
     *
     * @throws Cancelled if the owner is cancelled
     * @throws TimedOut if the scope's deadline passed
     * @throws CompletionException wrapping the first failure of a fail-fast scope, if checked
     * @throws IllegalStateException if the scope is closed
     * @throws WrongThreadException if the caller is not the scope's owner
     */
    public void join() {
        requireOwner("join");
        if (isClosed()) {
            throw new IllegalStateException("join after close: " + this);
        }
        Io io = Io.current();
        try {
            Watch.checkpoint(io);
            awaitChildren(io);
        } catch (Cancelled c) {
            if (ownerStop.cause() == null || ownerStop.ownerCancelledOtherwise()) {
                cancelChildren(); // the owner's own cancellation: stop the children, let them unwind, pass it on
                Watch.waitThrough(() -> awaitChildren(io));
                throw (Cancelled) withUnreportedSuppressed(c);
            }
        }
        Throwable outcome = ownerStop.cause();
        if (outcome != null) {
            cancelChildren(); // past the deadline: the children left (fail-fast: already cancelled)
            Watch.waitThrough(() -> awaitChildren(io));
            ownerStop.end(); // the scope's cancellation of its owner ends with its outcome
            outcomeThrown = true;
            throw Watch.unchecked(withUnreportedSuppressed(outcome));
        }
    }

    /** Parks until pending == 0; throws Cancelled at the owner's suspend point unless shielded. */
    private void awaitChildren(Io io) {
        try {
            while (pending.get() > 0) {
                ParkToken token = ParkToken.create(this);
                joiner = new Joiner(io, token);
                if (pending.get() == 0) {
                    break;
                }
                io.suspendRaw(token);
            }
        } finally {
            joiner = null;
        }
    }

    /**
     * Closes the scope: cancels every unfinished child, waits (shielded) until all have finished
     * unwinding, and ends the scope's cancellation of its owner. Then throws what the owner has
     * not seen yet: the first failure of a fail-fast scope (with the others suppressed) or the
     * {@link TimedOut} of a deadline, unless {@code join} threw it. If the owner may already hold
     * the failure (a suspend point on its stack threw the {@link Cancelled} it caused, an await of
     * the failed child rethrew it, {@link #failures()} handed it out), it may be the very
     * exception unwinding the block: then close throws a {@link CompletionException} wrapping it
     * (and carrying the others), never the same instance again. On a scheduling Io which of the
     * two comes out can depend on timing (whether someone awaited the child before close). If
     * the owner is cancelled, a
     * {@link Cancelled} carrying the failures not yet reported as suppressed. A
     * supervisor reports its unobserved failures to its handler and returns normally. Idempotent:
     * closing again does nothing. After close, {@code fork} and {@code join} throw
     * {@link IllegalStateException}.
     *
     * @throws CompletionException wrapping the first failure of a fail-fast scope, if checked, or
     *     (whatever it is, an {@link Error} too) if the owner may already hold it
     * @throws TimedOut if the scope's deadline passed and {@code join} did not say so
     * @throws WrongThreadException if the caller is not the scope's owner
     */
    @Override
    public void close() {
        requireOwner("close");
        if (!markClosed()) {
            return;
        }
        if (finish()) { // the owner's own Cancelled is on its way: failures nobody saw ride on one of their own
            if (hasUnreported()) {
                throw (Cancelled) withUnreportedSuppressed(
                        new Cancelled("the scope's owner was cancelled; the failures of its children are suppressed"));
            }
            return;
        }
        Throwable outcome = outcomeAtClose;
        if (outcome == null || outcomeThrown) {
            return;
        }
        outcomeThrown = true;
        if (ownerStop.wasDelivered() || firstFailureObserved(outcome)) {
            // the owner may hold it already (a Cancelled caused by it, or an await of the failed
            // child rethrew it) and it may be what unwinds this block: throwing the same instance
            // would make try-with-resources fail on self-suppression. Nor may it vanish (the owner
            // may have swallowed that Cancelled, or a sibling did the awaiting): a wrapper of its
            // own carries it, and the others, out (suppressed on the block's exception, if any)
            throw (CompletionException) withUnreportedSuppressed(new CompletionException(
                    "the scope failed; its first failure may already have reached the owner: " + outcome, outcome));
        }
        throw Watch.unchecked(withUnreportedSuppressed(outcome));
    }

    /**
     * Whether {@code outcome} is the first failure and someone may hold it: its child's future
     * reported it (an await, exceptionNow), or {@link #failures()} handed it out.
     */
    private boolean firstFailureObserved(Throwable outcome) {
        lock.lock();
        try {
            return !failures.isEmpty()
                    && failures.getFirst() == outcome
                    && (seen > 0 || CancelScope.failureObserved(failedChildren.getFirst()));
        } finally {
            lock.unlock();
        }
    }

    /**
     * The block form's exit after the block (or its join) threw {@code thrown}: closes, then
     * decides what comes out. The scope's own cancellation unwinding the block becomes the
     * scope's outcome (keeping what the Cancelled carried as suppressed); anything else comes out
     * as it is, with what nobody saw suppressed.
     */
    private RuntimeException closeAfter(Throwable thrown) {
        if (!markClosed()) {
            return Watch.unchecked(thrown); // the block closed the scope itself: close already reported
        }
        boolean cancelledOtherwise = finish();
        Throwable outcome = outcomeAtClose;
        if (outcome != null && !outcomeThrown && !cancelledOtherwise) {
            outcomeThrown = true;
            if (thrown instanceof Cancelled && thrown != outcome) { // the scope's own cancellation unwound the block
                for (Throwable carried : thrown.getSuppressed()) {
                    Watch.suppress(outcome, carried); // e.g. an inner scope's failures, attached to it on the way out
                }
                return Watch.unchecked(withUnreportedSuppressed(outcome));
            }
            if (outcome == timedOut) {
                Watch.suppress(thrown, outcome); // a failure is among the unreported ones already
            }
        }
        return Watch.unchecked(withUnreportedSuppressed(thrown));
    }

    /**
     * close's work: cancels and waits for the children, records the outcome and ends the owner's
     * cancellation, reports a supervisor's unobserved failures. Returns whether the owner is
     * cancelled otherwise than by this scope (its own cancel, an interrupt, an enclosing scope).
     */
    private boolean finish() {
        boolean cancelledOtherwise;
        try {
            cancelChildren();
            Io io = Io.current();
            Watch.waitThrough(() -> awaitChildren(io));
            outcomeAtClose = ownerStop.cause(); // before end(): a deadline crossed after it does not count
            cancelledOtherwise = ownerStop.ownerCancelledOtherwise();
        } finally {
            ownerStop.end(); // whatever happened: the scope's cancellation never outlives it
        }
        if (policy == Policy.SUPERVISOR) {
            reportUnobserved();
        }
        return cancelledOtherwise;
    }

    /** A supervisor's close: each failure nobody observed goes to the handler. */
    private void reportUnobserved() {
        List<Throwable> unobserved = new ArrayList<>();
        lock.lock();
        try {
            for (int i = Math.max(reported, seen); i < failures.size(); i++) {
                if (!CancelScope.failureObserved(failedChildren.get(i))) {
                    unobserved.add(failures.get(i));
                }
            }
            reported = failures.size();
        } finally {
            lock.unlock();
        }
        if (unobserved.isEmpty()) {
            return;
        }
        Thread self = Thread.currentThread();
        Thread.UncaughtExceptionHandler to = handler;
        if (to == null) {
            to = Io.current().uncaughtExceptionHandler();
        }
        if (to == null) {
            to = self.getUncaughtExceptionHandler();
        }
        for (Throwable failure : unobserved) {
            try {
                to.uncaughtException(self, failure);
            } catch (Throwable ignored) {
                // as with threads: what the handler throws is ignored (an Error too: the other
                // failures are still reported, and the block's own outcome stays)
            }
        }
    }

    /**
     * Adds the failures not yet reported to {@code primary}'s suppressed (skipping itself and the
     * failure it wraps); returns it.
     */
    private Throwable withUnreportedSuppressed(Throwable primary) {
        lock.lock();
        try {
            for (int i = reported; i < failures.size(); i++) {
                Throwable failure = failures.get(i);
                if (failure != primary.getCause()) {
                    Watch.suppress(primary, failure);
                }
            }
            reported = failures.size();
        } finally {
            lock.unlock();
        }
        return primary;
    }

    private boolean hasUnreported() {
        lock.lock();
        try {
            return reported < failures.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns the failures of the children that failed (ended with an exception other than
     * {@link Cancelled}), in the order they finished. Thread-safe; a snapshot. Reading them counts
     * as observing them: a supervisor does not report these to its handler.
     *
     * @return an unmodifiable list of failures, empty if none
     */
    public List<Throwable> failures() {
        lock.lock();
        try {
            seen = failures.size();
            return List.copyOf(failures);
        } finally {
            lock.unlock();
        }
    }

    private boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /** Marks the scope closed; returns false if it already was. */
    private boolean markClosed() {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            closed = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void cancelChildren() {
        List<Future<?>> snapshot;
        lock.lock();
        try {
            snapshot = List.copyOf(children);
        } finally {
            lock.unlock();
        }
        Watch.cancelAll(snapshot);
    }

    private void requireOwner(String operation) {
        boolean owner = ownerTask != null
                ? Io.currentTask().orElse(null) == ownerTask
                : Io.currentTask().isEmpty() && Thread.currentThread() == ownerThread;
        if (!owner) {
            throw new WrongThreadException(operation + " may be called only by the scope's owner, "
                    + (ownerTask != null ? ownerTask : ownerThread));
        }
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return "Scope[" + policy + (closed ? ", closed" : shutDown ? ", shut down" : "")
                    + (clock != null ? ", deadline=" + deadlineMs : "")
                    + ", pending=" + pending.get() + ", failures=" + failures.size() + "]";
        } finally {
            lock.unlock();
        }
    }
}
