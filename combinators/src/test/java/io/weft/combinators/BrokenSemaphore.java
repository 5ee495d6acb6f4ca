package io.weft.combinators;

import io.weft.Io;
import io.weft.ParkToken;
import java.util.ArrayDeque;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A deliberately broken copy of {@link Semaphore}'s acquire/release protocol, for
 * {@link SemaphoreLincheckTest}: a cancelled acquire that a release had already granted the
 * permit to does not pass the permit on, so the permit is lost. Everything else is as in
 * {@code Semaphore}.
 */
final class BrokenSemaphore {
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private int permits;

    private static final class Waiter {
        final ParkToken token = ParkToken.create();
        final Io io;
        boolean granted; // guarded by lock

        Waiter(Io io) {
            this.io = io;
        }
    }

    BrokenSemaphore(int permits) {
        this.permits = permits;
    }

    void acquire() {
        Waiter waiter;
        lock.lock();
        try {
            if (permits > 0) {
                permits--;
                return;
            }
            waiter = new Waiter(Io.current());
            waiters.addLast(waiter);
        } finally {
            lock.unlock();
        }
        try {
            waiter.io.suspendRaw(waiter.token);
        } catch (RuntimeException | Error e) {
            lock.lock();
            try {
                waiters.remove(waiter); // THE BUG: a granted permit is not released again
            } finally {
                lock.unlock();
            }
            throw e;
        }
    }

    void release() {
        Waiter next;
        lock.lock();
        try {
            next = waiters.pollFirst();
            if (next == null) {
                permits++;
                return;
            }
            next.granted = true;
        } finally {
            lock.unlock();
        }
        next.io.ready(next.token);
    }

    int availablePermits() {
        lock.lock();
        try {
            return permits;
        } finally {
            lock.unlock();
        }
    }
}
