package io.weft.fiber;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.internal.Unchecked;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
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
     * value, if any, goes nowhere). Made on first use. Closing the FiberIo fails the queued
     * bodies as soon as it has cancelled every task (failQueued), so a caller still waiting (a
     * shielded one) gets an answer at once: the IllegalStateException of a call after close
     * (call() turns the pool's refusal into it; a body's own exception crosses in an Outcome,
     * never as the future's failure, so it comes out as the same instance). After the
     * tasks' unwind, it interrupts the bodies still running (shutdownNow: their callers were
     * cancelled and stopped waiting, or, shielded, had the unwind's time to get their answer). A body the rejection handler queues as the pool shuts down is taken back out and
     * refused (enqueue, then re-check: shutdownNow sets the state, then drains, so either the
     * drain has it or the re-check sees the shutdown). Pool threads inherit no
     * InheritableThreadLocal values and get the FiberIo's context class loader: a thread is made
     * on whichever task's call needed it, and later runs other tasks' bodies.
     *
     * A thread that ends leaves no body queued behind it. An idle thread whose keep-alive poll
     * timed out still counts toward `max` until it has left; a call that came in that window
     * found no thread waiting and no room for one, and was queued. The executor then lets the
     * thread go all the same (it keeps one, the core thread, and does not replace others), so the
     * body waited for a busy thread, for good if that thread's body waited for it. Each pool
     * thread therefore looks at the queue after it has left the count (its run returned) and, if
     * a body is there, hands the pool a drain, which an idle thread takes or a new thread runs
     * (there is room now). The queuing side looks too: after its enqueue, a call that sees fewer
     * threads than `max` hands the pool a drain. The executor's thread set and its size are read
     * and changed under its main lock, and a leaving thread is out of the set before it looks at
     * the queue: either the call sees the room or the thread sees the body. A spare drain finds
     * nothing and does nothing.
     *
     * Per call: a Call (the pool's FutureTask and the caller's CompletableFuture), a bodiless Weft task and a ParkToken;
     * a hand-off or a thread start; no lock on the caller's path beyond the pool's own.
     */

    private final ThreadPoolExecutor pool;
    private final HandOff queue;
    private final String name;

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

        /** Tests only: run once by the next keep-alive poll, which then returns as if it timed out. */
        transient volatile Runnable beforeTimedPoll;

        @Override
        public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
            Runnable hook = beforeTimedPoll;
            if (hook != null) {
                beforeTimedPoll = null;
                hook.run();
                return null;
            }
            return super.poll(timeout, unit);
        }
    }

    /**
     * @param loader the context class loader of every pool thread: the FiberIo's (that of the
     *     thread that built it, as its workers and runners have), not that of the task whose
     *     call made the thread
     */
    BlockingPool(String name, int max, ClassLoader loader) {
        AtomicInteger numbers = new AtomicInteger();
        HandOff queue = new HandOff();
        this.queue = queue;
        this.pool = new ThreadPoolExecutor(
                1, // one thread stays once made: a body the rejection handler queues always has one to take it
                max,
                30,
                TimeUnit.SECONDS,
                queue,
                body -> {
                    Thread thread = Thread.ofPlatform()
                            .daemon()
                            .name(name + "-blocking-" + numbers.incrementAndGet())
                            .inheritInheritableThreadLocals(false) // not the values of the task that made it
                            .unstarted(() -> {
                                body.run(); // the executor's loop: returns once this thread has left the count
                                drainIfLeftBehind();
                                runHook(afterThreadLeft);
                            });
                    thread.setContextClassLoader(loader); // nor its loader
                    return thread;
                },
                (body, executor) -> {
                    if (executor.isShutdown()) {
                        throw closed();
                    }
                    runHook(beforeEnqueue);
                    queue.enqueue(body); // every thread is busy: the first to finish takes it
                    if (executor.isShutdown() && queue.remove(body)) {
                        throw closed(); // shutdownNow drained the queue before this enqueue: not left there
                    }
                    if (!(body instanceof Drain) && executor.getPoolSize() < executor.getMaximumPoolSize()) {
                        drainIfLeftBehind(); // a thread left since this call found no room (see the notes)
                    }
                });
        this.name = name;
    }

    /**
     * Runs {@code body} on a pool thread while the calling task suspends; see Io.blocking. The
     * body's outcome crosses to the caller in an {@link Outcome}, never as a failure of the
     * future it waits on: that future's own rules (a CompletionException unwrapped, a
     * CancellationException taken for a cancellation) would change what the body threw, where
     * Io.blocking promises the same instance, as BlockingIo's inline call gives.
     *
     * @throws IllegalStateException if the pool is closed: the body was never run (its cause the
     *     pool's RejectedExecutionException; a body's own one comes out as it is)
     */
    <T> T call(Callable<T> body) {
        Call<T> call = new Call<>(body);
        try {
            pool.execute(call);
        } catch (RejectedExecutionException refused) {
            throw closedFor(refused);
        }
        Outcome<T> outcome;
        try {
            outcome = Future.from(call.result).await(); // suspends the task; the workers run others
        } catch (Cancelled cancelled) {
            call.cancel(true); // the body is interrupted; its value, if any, is dropped
            throw cancelled;
        }
        if (outcome.refused() != null) {
            throw closedFor(outcome.refused());
        }
        if (outcome.failure() != null) {
            throw Unchecked.rethrowable(outcome.failure());
        }
        return outcome.value();
    }

    /** How a body ended: its value, its failure (as it threw it), or the pool's refusal to run it. */
    private record Outcome<T>(T value, Throwable failure, RejectedExecutionException refused) {}

    /** See the notes: a body queued as a thread left gets a thread. */
    private void drainIfLeftBehind() {
        if (queue.isEmpty() || pool.isShutdown()) {
            return;
        }
        try {
            pool.execute(new Drain());
        } catch (RejectedExecutionException shutDown) {
            // shut down meanwhile: shutdownNow fails what is queued
        }
    }

    /**
     * Brings a thread to the queue: it runs one queued body, and the thread's own loop takes the
     * rest (one body per drain: the loop clears a cancel's interrupt between bodies, a loop here
     * would not).
     */
    private final class Drain implements Runnable {
        @Override
        public void run() {
            Runnable next = queue.poll();
            if (next != null) {
                next.run();
            }
        }
    }

    /** Tests only: run by the rejection handler before it queues a body. */
    volatile Runnable beforeEnqueue;
    /** Tests only: run by a pool thread after it left the count and looked at the queue. */
    volatile Runnable afterThreadLeft;

    private static void runHook(Runnable hook) {
        if (hook != null) {
            hook.run();
        }
    }

    /** Tests only: see HandOff.beforeTimedPoll. */
    void beforeTimedPoll(Runnable hook) {
        queue.beforeTimedPoll = hook;
    }

    /** Tests only: how many bodies wait in the queue. */
    int queued() {
        return queue.size();
    }

    /**
     * Refuses new bodies, interrupts the running ones, and fails the queued ones, which will never
     * run, so a caller still waiting (a shielded one) gets an answer.
     */
    void shutdownNow() {
        failAll(pool.shutdownNow());
    }

    /**
     * Fails the bodies queued now, which a closing FiberIo will never run: their callers (shielded
     * ones still wait) get an answer at once rather than after the close's whole unwind.
     */
    void failQueued() {
        List<Runnable> queued = new ArrayList<>();
        pool.getQueue().drainTo(queued);
        failAll(queued);
    }

    private void failAll(List<Runnable> neverRan) {
        for (Runnable queued : neverRan) {
            if (queued instanceof Call<?> call) {
                call.result.complete(new Outcome<>(
                        null, null, new RejectedExecutionException(name + " closed before this blocking call ran")));
                call.cancel(false);
            }
        }
    }

    private IllegalStateException closedFor(RejectedExecutionException refused) {
        return new IllegalStateException(name + " is closed: it runs no more blocking calls", refused);
    }

    private RejectedExecutionException closed() {
        return new RejectedExecutionException(name + " is closed: it runs no more blocking calls");
    }

    /** A body on its way through the pool: its caller's result is completed however it ends, run or not. */
    private static final class Call<T> extends FutureTask<T> {
        final CompletableFuture<Outcome<T>> result = new CompletableFuture<>();

        Call(Callable<T> body) {
            super(body);
        }

        @Override
        protected void done() {
            if (isCancelled()) {
                result.cancel(false); // unless already failed: a cancelled caller is not waiting
                return;
            }
            try {
                result.complete(new Outcome<>(get(), null, null));
            } catch (ExecutionException failed) {
                result.complete(new Outcome<>(null, failed.getCause(), null));
            } catch (InterruptedException | CancellationException impossible) {
                result.completeExceptionally(impossible); // done() runs once the outcome is set
            }
        }
    }

    /** How many pool threads exist now. */
    int threads() {
        return pool.getPoolSize();
    }
}
