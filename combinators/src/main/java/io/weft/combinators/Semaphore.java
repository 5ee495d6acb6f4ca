package io.weft.combinators;

import io.weft.Cancelled;
import io.weft.Io;
import io.weft.ParkToken;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A counting semaphore for Weft tasks: {@link #acquire()} suspends the task (not its carrier)
 * while no permit is available, and is cancellation-safe. Thread-safe; permits are handed to
 * waiters in FIFO order.
 *
 * <p>Cancellation safety: an {@code acquire} either returns holding one permit, or throws
 * {@link Cancelled} holding none; a permit is never lost or duplicated, including when
 * {@link #release()} hands a permit to a waiter at the moment it is cancelled (the cancelled
 * waiter passes that permit on). Who is cancelled when: nothing is cancelled by the semaphore;
 * a cancelled waiter simply leaves the queue. The guarantee is at the call: a task that acquires
 * and is cancelled before it returns still holds the permit, and a value it returns after the
 * cancel is dropped, so release in a {@code finally} (or use {@link #withPermit}) rather than
 * handing the permit out through the task's value.
 *
 * {@snippet :
 * Semaphore connections = new Semaphore(8);
 * Response r = connections.withPermit(() -> client.get(url));   // at most 8 at a time
 * }
 */
public final class Semaphore {
    /*
     * Implementation notes.
     *
     * State, all guarded by `lock` (a ReentrantLock: it parks a fiber, never its carrier for
     * long; critical sections are a few field writes):
     *   permits  - free permits; written by acquire/tryAcquire/release/cancelled acquire.
     *   waiters  - FIFO of parked acquirers. Invariant: waiters non-empty => permits == 0,
     *              because release hands a permit straight to the first waiter instead of
     *              counting it. So acquire/tryAcquire never need to check the queue, and a
     *              tryAcquire cannot barge past a waiter.
     * Each waiter has a one-shot ParkToken and a `granted` flag (written under the lock by
     * release, read under the lock by its owner after a Cancelled).
     *
     * Hand-off: release() polls the first waiter, sets granted = true and readies its token
     * outside the lock. The waiter's suspendRaw returns normally (it owns the permit) or throws
     * Cancelled: ParkToken.suspend re-checks cancellation even after a ready, so a permit can be
     * granted to a waiter that then throws. Waiter outcomes, decided under the lock:
     *   WAITING  -> GRANTED    // release chose it: the permit is now its
     *   WAITING  -> (removed)  // cancelled before any grant: it leaves the queue, no permit
     *   GRANTED  -> (passed)   // cancelled after the grant: it releases the permit again,
     *                          // to the next waiter or to `permits`
     * So every permit is at all times in `permits`, held by a caller, or granted to exactly
     * one waiter, and the sum is conserved.
     */

    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private int permits;

    /** One parked acquire: its token, the Io to ready it with, and whether it got a permit. */
    private static final class Waiter {
        final ParkToken token;
        final Io io;
        boolean granted; // guarded by lock

        Waiter(Io io, Semaphore semaphore) {
            this.io = io;
            this.token = ParkToken.create(semaphore);
        }
    }

    /**
     * Creates a semaphore with {@code permits} free permits.
     *
     * @param permits the initial number of permits, not negative
     * @throws IllegalArgumentException if {@code permits} is negative
     */
    public Semaphore(int permits) {
        if (permits < 0) {
            throw new IllegalArgumentException("permits must not be negative: " + permits);
        }
        this.permits = permits;
    }

    /**
     * Takes a permit, suspending the calling task until one is available. It is a suspend point
     * only when it has to wait: a free permit is taken at once, even by a cancelled task.
     *
     * @throws Cancelled if the calling task is cancelled while it waits; it then holds no permit
     */
    public void acquire() {
        Waiter waiter;
        lock.lock();
        try {
            if (permits > 0) {
                permits--;
                return;
            }
            waiter = new Waiter(Io.current(), this);
            waiters.addLast(waiter);
        } finally {
            lock.unlock();
        }
        try {
            waiter.io.suspendRaw(waiter.token); // returns only once readied, i.e. granted
        } catch (RuntimeException | Error e) { // Cancelled, or anything else a runtime throws
            abandon(waiter);
            throw e;
        }
    }

    /** A cancelled waiter leaves: out of the queue, or passing on a permit granted meanwhile. */
    private void abandon(Waiter waiter) {
        boolean granted;
        lock.lock();
        try {
            granted = waiter.granted;
            if (!granted) {
                waiters.remove(waiter);
            }
        } finally {
            lock.unlock();
        }
        if (granted) {
            release();
        }
    }

    /**
     * Takes a permit if one is free now; never suspends.
     *
     * @return {@code true} if a permit was taken
     */
    public boolean tryAcquire() {
        lock.lock();
        try {
            if (permits > 0) {
                permits--;
                return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Returns a permit: hands it to the longest-waiting acquirer, or adds it to the free
     * permits. Never suspends. Like {@link java.util.concurrent.Semaphore}, it does not check
     * that the caller holds a permit.
     *
     * @throws IllegalStateException if the number of free permits would overflow an int
     */
    public void release() {
        Waiter next;
        lock.lock();
        try {
            next = waiters.pollFirst();
            if (next == null) {
                if (permits == Integer.MAX_VALUE) {
                    throw new IllegalStateException("too many permits released");
                }
                permits++;
                return;
            }
            next.granted = true;
        } finally {
            lock.unlock();
        }
        next.io.ready(next.token);
    }

    /**
     * Returns the number of free permits now (a snapshot; 0 while tasks are waiting).
     *
     * @return the free permits
     */
    public int availablePermits() {
        lock.lock();
        try {
            return permits;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code body} holding a permit: {@link #acquire()}, call, then {@link #release()} in a
     * {@code finally}, whatever the body's outcome.
     *
     * @param body the code to run
     * @param <T> the value type
     * @return what {@code body} returns
     * @throws Cancelled if the calling task is cancelled while waiting for a permit (the body
     *     does not run)
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of the body;
     *     unchecked ones propagate as they are
     * @throws NullPointerException if {@code body} is null
     */
    public <T> T withPermit(Callable<T> body) {
        Objects.requireNonNull(body, "body");
        acquire();
        try {
            return body.call();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new java.util.concurrent.CompletionException(e);
        } finally {
            release();
        }
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return "Semaphore[permits=" + permits + ", waiters=" + waiters.size() + "]";
        } finally {
            lock.unlock();
        }
    }
}
