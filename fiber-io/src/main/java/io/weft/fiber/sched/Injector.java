package io.weft.fiber.sched;

import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The scheduler's global queue: a FIFO of tasks submitted from outside any worker, and of the
 * halves that workers move out of their full {@link RunQueue}s. Thread-safe: any thread may push,
 * any worker may pop.
 *
 * <p>Workers fetch in batches so the lock is taken once per batch, not once per task:
 *
 * <pre>{@code
 * int n = injector.popBatch(buffer, Math.min(buffer.length,
 *         Injector.fairShare(injector.size(), workerCount)));
 * }</pre>
 */
final class Injector {
    /*
     * Implementation notes.
     *
     * Overview: an ArrayDeque guarded by one ReentrantLock. The injector is off the hot path
     * (a worker reaches it only when its LIFO slot and its RunQueue are empty, every N ticks, or
     * on overflow, which moves half a RunQueue in one pushBatch), so a lock costs less than the
     * complexity of a lock-free MPMC queue, and it makes batch push/pop atomic for free: a batch
     * pushed by one call is contiguous in the queue, and a popBatch takes a contiguous run.
     *
     * Shared fields:
     *   tasks   read and written only while holding `lock`, by any thread.
     *   length  written only while holding `lock` (after every change to `tasks`), read by
     *           anyone without the lock: size(), isEmpty(), and the fast path of pop/popBatch.
     *
     * Memory ordering: the lock orders everything inside it. `length` is volatile so that a
     * worker deciding whether to take the lock sees a recent value; it is a hint, not a
     * guarantee: a reader may see 0 just before a push lands. That is benign because every
     * producer that must not be missed wakes a parked worker after pushing (IdleWorkers' "last
     * searcher must notify" protocol), and a woken worker looks again; and the value is exact
     * once the reader holds the lock. Because `length` is written while the lock is held, its
     * writes are totally ordered and never go backwards relative to the queue they describe.
     *
     * Alternatives: an intrusive linked list through the task records (the seed's design, no
     * allocation per push) needs a `next` field in every task and ties the injector to the task
     * type; ArrayDeque grows its array geometrically, so pushes allocate rarely. A lock-free MPSC
     * queue (JCTools-style) would make push wait-free, but batch pop from many consumers needs a
     * lock or a far more complex protocol, and the seed shows the lock is not a bottleneck.
     */

    /** Upper bound of {@link #fairShare}: a worker never takes more than this in one batch. */
    static final int MAX_BATCH = 64;
    /** Lower bound of {@link #fairShare} (when that many tasks exist): a fetch is worth its lock. */
    static final int MIN_BATCH = 4;

    private final ReentrantLock lock = new ReentrantLock();
    /** Guarded by {@link #lock}. */
    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    /** {@code tasks.size()}, written under the lock, read without it. */
    private volatile int length;

    /** Creates an empty injector. */
    Injector() {}

    /**
     * How many tasks one worker should take from an injector holding {@code length} tasks when
     * {@code workers} workers share it: {@code min(length / workers, 64)}, but at least
     * {@code min(4, length)}, so a short queue is fetched in one go rather than one task per lock.
     * Examples: {@code fairShare(0, 2) == 0}, {@code fairShare(3, 2) == 3},
     * {@code fairShare(10, 4) == 4}, {@code fairShare(100, 2) == 50},
     * {@code fairShare(1000, 2) == 64}. Never more than {@code length}.
     *
     * @param length the number of queued tasks, at least 0
     * @param workers the number of workers, at least 1
     * @return the batch size, in {@code [0, min(length, 64)]}
     * @throws IllegalArgumentException if {@code length < 0} or {@code workers < 1}
     */
    static int fairShare(int length, int workers) {
        if (length < 0 || workers < 1) {
            throw new IllegalArgumentException("length " + length + ", workers " + workers);
        }
        return Math.max(Math.min(length / workers, MAX_BATCH), Math.min(MIN_BATCH, length));
    }

    /**
     * Appends one task. Thread-safe.
     *
     * @param task the task, not null
     */
    void push(Runnable task) {
        Objects.requireNonNull(task, "task");
        lock.lock();
        try {
            tasks.addLast(task);
            length = tasks.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Appends {@code tasks[from .. from + count)} in order, under one lock acquisition, so the
     * batch stays contiguous. Thread-safe. All or nothing: if any element is null, nothing is
     * pushed.
     *
     * @param batch the array holding the tasks; not modified
     * @param from the index of the first task
     * @param count how many tasks, at least 0
     * @throws IndexOutOfBoundsException if the range is not inside {@code batch}
     * @throws NullPointerException if an element in the range is null
     */
    void pushBatch(Runnable[] batch, int from, int count) {
        Objects.checkFromIndexSize(from, count, batch.length);
        for (int i = from; i < from + count; i++) {
            Objects.requireNonNull(batch[i], "task");
        }
        if (count == 0) {
            return;
        }
        lock.lock();
        try {
            for (int i = from; i < from + count; i++) {
                tasks.addLast(batch[i]);
            }
            length = tasks.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes up to {@code max} tasks, oldest first, into {@code into[0 .. n)}. Thread-safe.
     *
     * @param into where the tasks go; {@code into.length >= max}
     * @param max the most tasks to take, at least 0
     * @return {@code n}, the number taken: 0 if the injector was empty
     * @throws IllegalArgumentException if {@code max < 0} or {@code max > into.length}
     */
    int popBatch(Runnable[] into, int max) {
        if (max < 0 || max > into.length) {
            throw new IllegalArgumentException("max " + max + ", buffer " + into.length);
        }
        if (max == 0 || length == 0) {
            return 0;
        }
        lock.lock();
        try {
            int n = Math.min(max, tasks.size());
            for (int i = 0; i < n; i++) {
                into[i] = tasks.pollFirst();
            }
            length = tasks.size();
            return n;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes the oldest task. Thread-safe.
     *
     * @return the task, or null if the injector was empty
     */
    Runnable pop() {
        if (length == 0) {
            return null;
        }
        lock.lock();
        try {
            Runnable task = tasks.pollFirst();
            length = tasks.size();
            return task;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The number of queued tasks, read without the lock. Thread-safe; a snapshot that concurrent
     * pushes and pops may change at once.
     *
     * @return the number of queued tasks
     */
    int size() {
        return length;
    }

    /**
     * Whether no task is queued, read without the lock. Thread-safe; a snapshot, like
     * {@link #size()}.
     *
     * @return true if the injector held no task when read
     */
    boolean isEmpty() {
        return length == 0;
    }
}
