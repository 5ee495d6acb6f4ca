package io.weft.combinators;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
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
 * A structured scope: the tasks it {@linkplain #fork forks} (its children) never outlive it. In
 * the shape of {@link java.util.concurrent.StructuredTaskScope}: open, fork, join, close, in a
 * try-with-resources block.
 *
 * {@snippet :
 * try (Scope scope = Scope.open()) {
 *     Future<User> user = scope.fork(() -> findUser(id));
 *     Future<List<Order>> orders = scope.fork(() -> fetchOrders(id));
 *     scope.join();                       // waits for both; rethrows the first failure
 *     return new Page(user.resultNow(), orders.resultNow());
 * }                                       // close: cancels and waits for anything left
 * }
 *
 * <h2>Policies</h2>
 * <ul>
 *   <li>{@link #open()} is <b>fail-fast</b>: the first child to fail (end with an exception
 *       other than {@link Cancelled}) cancels every other child, later forks are not run (they
 *       return an already-cancelled future), and {@link #join()} rethrows that failure once all
 *       children have finished.
 *   <li>{@link #supervisor()} <b>collects</b>: children do not affect each other, {@code join()}
 *       returns normally, and the failures are in {@link #failures()}.
 * </ul>
 * A child that ends cancelled (because the scope or someone holding its future cancelled it) is
 * not a failure under either policy.
 *
 * <h2>Who is cancelled when</h2>
 * <ul>
 *   <li>Fail-fast, a child fails: every other unfinished child.
 *   <li>The owner task is cancelled: every unfinished child, when the owner reaches its next
 *       suspend point in the scope ({@code join}) or leaves the block ({@code close}). A
 *       cancellation that hits the owner elsewhere (say, in a sleep) unwinds it to
 *       {@code close}, which cancels the children.
 *   <li>{@link #close()}: every unfinished child, then waits (shielded) until all have unwound.
 * </ul>
 *
 * <h2>Confinement</h2>
 * A scope belongs to the task that opened it (or the plain thread, outside any task): only the
 * owner may {@code fork}, {@code join} and {@code close}; others get a
 * {@link WrongThreadException}. Children cannot fork into their parent's scope; they open their
 * own. {@link #failures()} may be read by anyone. The scope's guarantee holds if it is closed, so
 * always use try-with-resources.
 */
public final class Scope implements AutoCloseable {
    /*
     * Implementation notes.
     *
     * State:
     *   lock      - guards children, failures, shutDown and closed. Never held while calling
     *               into a future (cancel may complete a not-yet-started child and run its
     *               onDone action, which takes the lock again) or while suspending.
     *   children  - unfinished children; the owner adds (fork), each child's onDone action
     *               removes itself. Closing/shutting down cancels a snapshot.
     *   pending   - forked and not yet done; incremented by the owner before spawning,
     *               decremented by the child's onDone action AFTER recording a failure, so
     *               pending == 0 means every outcome is recorded.
     *   joiner    - the owner's current (Io, ParkToken) while it waits in join/close; written
     *               by the owner, read by onDone actions, both volatile (seq_cst). The owner
     *               publishes the token then re-reads pending; an action decrements pending then
     *               reads the token: at least one sees the other, so no wake-up is lost.
     *               Tokens are one-shot: the owner parks on a fresh one each round.
     *
     * Fail-fast shutdown: the failing child's onDone action sets shutDown under the lock and
     * cancels the snapshot outside it. fork checks shutDown under the lock before spawning, and
     * again after adding the child (a sibling may fail in between): a child added before the
     * snapshot is in it; one added after sees shutDown and is cancelled by fork.
     *
     * Owner cancellation: join starts with a checkpoint (a suspend on a readied token) and waits
     * with suspendRaw, so the owner's cancellation surfaces there as Cancelled; join then cancels
     * every child, waits for them shielded, and rethrows. close waits shielded from the start.
     *
     * Alternative not taken: a watcher task per scope that awaits the owner. It would cost a task
     * and could not see a cancellation before it takes effect anyway (cancel is cooperative).
     */

    /** The two join policies. */
    private enum Policy { FAIL_FAST, SUPERVISOR }

    /** The owner's park while it waits for children. */
    private record Joiner(Io io, ParkToken token) {}

    private final Policy policy;
    private final Future<?> ownerTask; // null when opened by a plain thread
    private final Thread ownerThread;
    private final ReentrantLock lock = new ReentrantLock();
    private final Set<Future<?>> children = new LinkedHashSet<>(); // guarded by lock
    private final List<Throwable> failures = new ArrayList<>(); // guarded by lock
    private boolean shutDown; // guarded by lock
    private boolean closed; // guarded by lock
    private final AtomicInteger pending = new AtomicInteger();
    private volatile Joiner joiner;

    private Scope(Policy policy) {
        this.policy = policy;
        this.ownerTask = Io.currentTask().orElse(null);
        this.ownerThread = Thread.currentThread();
    }

    /**
     * Opens a fail-fast scope owned by the calling task (or plain thread): the first failing
     * child cancels its siblings and its failure surfaces from {@link #join()}.
     *
     * @return a new open scope
     */
    public static Scope open() {
        return new Scope(Policy.FAIL_FAST);
    }

    /**
     * Opens a supervisor scope owned by the calling task (or plain thread): children fail
     * independently, {@link #join()} returns normally and the failures are in
     * {@link #failures()}.
     *
     * @return a new open scope
     */
    public static Scope supervisor() {
        return new Scope(Policy.SUPERVISOR);
    }

    /**
     * Starts {@code body} as a child task ({@link Io#async} on the installed Io) and returns its
     * future. Forking is not a suspend point. In a fail-fast scope that has already seen a
     * failure, the body is not run and the returned future is already cancelled.
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
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("fork after close: " + this);
            }
            if (shutDown) {
                return Future.failed(new Cancelled("not started: the scope already failed"));
            }
            pending.incrementAndGet();
        } finally {
            lock.unlock();
        }
        Future<T> child;
        try {
            child = Io.async(body);
        } catch (RuntimeException | Error spawnFailed) {
            pending.decrementAndGet();
            throw spawnFailed;
        }
        boolean cancelNow;
        lock.lock();
        try {
            children.add(child);
            cancelNow = shutDown;
        } finally {
            lock.unlock();
        }
        child.onDone(() -> childDone(child));
        if (cancelNow) {
            child.cancel();
        }
        return child;
    }

    /** A child's onDone action: record its failure, maybe shut down, count it, wake the owner. */
    private void childDone(Future<?> child) {
        Throwable failure = child.state() == Future.State.FAILED ? child.exceptionNow() : null;
        List<Future<?>> toCancel = List.of();
        lock.lock();
        try {
            children.remove(child);
            if (failure != null) {
                failures.add(failure);
                if (policy == Policy.FAIL_FAST && !shutDown) {
                    shutDown = true;
                    toCancel = List.copyOf(children);
                }
            }
        } finally {
            lock.unlock();
        }
        Watch.cancelAll(toCancel);
        pending.decrementAndGet();
        Joiner waiting = joiner;
        if (waiting != null) {
            waiting.io().ready(waiting.token());
        }
    }

    /**
     * Waits until every child forked so far is done; a suspend point. Fail-fast: then rethrows
     * the first failure (an unchecked one as it is, a checked one wrapped in
     * {@link CompletionException}). Supervisor: returns normally; see {@link #failures()}.
     * May be called again after more forks.
     *
     * <p>If the owner is cancelled (on entry or while waiting), every unfinished child is
     * cancelled, {@code join} waits (shielded) for them to unwind, then throws {@link Cancelled}.
     *
     * @throws Cancelled if the owner task is cancelled
     * @throws CompletionException wrapping the first failure of a fail-fast scope, if checked
     * @throws IllegalStateException if the scope is closed
     * @throws WrongThreadException if the caller is not the scope's owner
     */
    public void join() {
        requireOwner("join");
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("join after close: " + this);
            }
        } finally {
            lock.unlock();
        }
        Io io = Io.current();
        try {
            Watch.checkpoint(io);
            awaitChildren(io);
        } catch (Cancelled c) {
            cancelChildren();
            Watch.waitThrough(() -> awaitChildren(io));
            throw c;
        }
        if (policy == Policy.FAIL_FAST) {
            Throwable first = firstFailure();
            if (first != null) {
                throw Watch.unchecked(first);
            }
        }
    }

    /** Parks until pending == 0; throws Cancelled at the owner's suspend point unless shielded. */
    private void awaitChildren(Io io) {
        try {
            while (pending.get() > 0) {
                ParkToken token = ParkToken.create();
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
     * Closes the scope: cancels every unfinished child and waits until all have finished
     * unwinding. Shielded, so it completes even for a cancelled owner (whose cancellation then
     * takes effect at its next suspend point after the block). Does not rethrow child failures.
     * Idempotent: closing again does nothing. After close, {@code fork} and {@code join} throw
     * {@link IllegalStateException}.
     *
     * @throws WrongThreadException if the caller is not the scope's owner
     */
    @Override
    public void close() {
        requireOwner("close");
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
        } finally {
            lock.unlock();
        }
        cancelChildren();
        Io io = Io.current();
        Watch.waitThrough(() -> awaitChildren(io));
    }

    /**
     * Returns the failures of the children that failed (ended with an exception other than
     * {@link Cancelled}), in the order they finished. Thread-safe; a snapshot.
     *
     * @return an unmodifiable list of failures, empty if none
     */
    public List<Throwable> failures() {
        lock.lock();
        try {
            return List.copyOf(failures);
        } finally {
            lock.unlock();
        }
    }

    private Throwable firstFailure() {
        lock.lock();
        try {
            return failures.isEmpty() ? null : failures.getFirst();
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
                    + ", pending=" + pending.get() + ", failures=" + failures.size() + "]";
        } finally {
            lock.unlock();
        }
    }
}
