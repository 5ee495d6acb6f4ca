package io.weft.fiber;

import io.weft.Cancelled;
import io.weft.Future;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a FiberIo runs {@link io.weft.Io#blocking} bodies: an elastic pool of platform threads
 * beside the workers. Thread-safe.
 */
final class BlockingPool {
    /*
     * Implementation notes.
     *
     * Elastic, bounded, reused: a body goes to an idle pool thread if one is waiting (the queue's
     * offer is a tryTransfer, which succeeds only then); else the pool makes a thread, up to
     * `max`; at the limit it is queued (the rejection handler enqueues) and the next thread to
     * finish takes it. Idle threads end after 30 s, except one (the core thread): with none, a
     * body queued just as the last thread timed out would wait for the next call to make one.
     * (Known: the hand-off picks the longest-idle thread, so a steady trickle of calls keeps
     * every thread of a past burst alive; a LIFO hand-off would let the unused ones end.) A plain ThreadPoolExecutor with a queue
     * would not do: it makes a new thread for each submission while below its core size, even
     * with idle threads, and with a bounded hand-off queue it rejects at the limit.
     *
     * The calling task waits on a CompletableFuture the body's thread completes, through
     * Future.from(...).await(): a Weft suspend point, so the task's fiber unmounts and its worker
     * runs other tasks; a cancel wakes it at once, and it then interrupts the body's thread (its
     * value, if any, goes nowhere). Made on first use; closing the FiberIo interrupts the
     * bodies still running (their callers were cancelled and stopped waiting already).
     *
     * Per call: a CompletableFuture, the pool's FutureTask, a bodiless Weft task and a ParkToken;
     * a hand-off or a thread start; no lock on the caller's path beyond the pool's own.
     */

    private final ThreadPoolExecutor pool;

    /** A queue whose offer succeeds only when a pool thread is waiting for work. */
    private static final class HandOff extends LinkedTransferQueue<Runnable> {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean offer(Runnable body) {
            return tryTransfer(body);
        }

        void enqueue(Runnable body) {
            super.offer(body);
        }
    }

    BlockingPool(String name, int max) {
        AtomicInteger numbers = new AtomicInteger();
        HandOff queue = new HandOff();
        this.pool = new ThreadPoolExecutor(
                1, // one thread stays once made: a body the rejection handler queues always has one to take it
                max,
                30,
                TimeUnit.SECONDS,
                queue,
                body -> Thread.ofPlatform()
                        .daemon()
                        .name(name + "-blocking-" + numbers.incrementAndGet())
                        .unstarted(body),
                (body, executor) -> {
                    if (executor.isShutdown()) {
                        throw new RejectedExecutionException(name + " is closed: it runs no more blocking calls");
                    }
                    queue.enqueue(body); // every thread is busy: the first to finish takes it
                });
    }

    /** Runs {@code body} on a pool thread while the calling task suspends; see Io.blocking. */
    <T> T call(Callable<T> body) {
        CompletableFuture<T> result = new CompletableFuture<>();
        java.util.concurrent.Future<?> running = pool.submit(() -> {
            try {
                result.complete(body.call());
            } catch (Throwable failure) {
                result.completeExceptionally(failure);
            }
        });
        try {
            return Future.from(result).await(); // suspends the task; the workers run others
        } catch (Cancelled cancelled) {
            running.cancel(true); // the body is interrupted; its value, if any, is dropped
            throw cancelled;
        }
    }

    /** Refuses new bodies and interrupts the running ones. */
    void shutdownNow() {
        pool.shutdownNow();
    }

    /** How many pool threads exist now. */
    int threads() {
        return pool.getPoolSize();
    }
}
