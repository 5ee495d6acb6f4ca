package io.weft.fiber;

import io.weft.RawTask;
import io.weft.fiber.sched.Job;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The tasks a FiberIo has spawned and not yet finished: what close() cancels and waits for.
 * Thread-safe.
 */
final class LiveTasks {
    /*
     * Implementation notes.
     *
     * Structure: a power-of-two array of shards, each an intrusive doubly-linked list of Entry
     * under the shard's monitor. The Entry is the Runnable the fiber runs, so registering a task
     * allocates nothing beyond what spawning needs anyway; a shard is picked by the spawning
     * thread's id, so spawns from different threads rarely share a lock. (Before: one
     * ConcurrentHashMap key set plus two atomic counters, all shared by every spawn; its
     * remove() showed up as ~8% of the workers' RUNNABLE samples in spawn_many_local.)
     *
     * Spawn vs close: add() checks `closing` inside the shard's lock; close() sets `closing`
     * (volatile), then visits every shard under its lock. A spawn that locks a shard before
     * close visits it is linked there and gets cancelled by the sweep; one that locks after reads
     * `closing` as set (the closer's write happens-before its unlock) and is refused.
     *
     * End vs the closer's wait: an ending task unlinks under the lock, then reads `closer`; the
     * closer writes `closer`, then checks the shards under their locks. Whichever takes a
     * shard's lock second sees the other's write, so the closer either sees the task gone or the
     * task sees the closer and unparks it: no lost wake-up.
     */

    /** One live task, linked in its shard while it runs; also the scheduler's Job for it. */
    final class Entry extends Job {
        final RawTask task;
        final Shard shard;
        Entry prev;
        Entry next;

        Entry(RawTask task, Shard shard) {
            this.task = task;
            this.shard = shard;
        }

        @Override
        public void run() {
            try {
                task.run();
            } finally {
                ended();
            }
        }

        @Override
        public void abandon() {
            try {
                task.cancel(); // never started: it completes as cancelled, its body never runs
            } finally {
                ended();
            }
        }

        private void ended() {
            shard.remove(this);
            Thread waiting = closer;
            if (waiting != null) {
                LockSupport.unpark(waiting);
            }
        }
    }

    /** A list of entries under its own monitor. */
    final class Shard {
        private Entry head;
        private int size;

        synchronized Entry add(RawTask task) {
            if (closing) {
                return null;
            }
            Entry entry = new Entry(task, this);
            entry.next = head;
            if (head != null) {
                head.prev = entry;
            }
            head = entry;
            size++;
            return entry;
        }

        synchronized void remove(Entry entry) {
            if (entry.prev != null) {
                entry.prev.next = entry.next;
            } else {
                head = entry.next;
            }
            if (entry.next != null) {
                entry.next.prev = entry.prev;
            }
            entry.prev = null;
            entry.next = null;
            size--;
        }

        synchronized int size() {
            return size;
        }

        synchronized void copyTo(List<RawTask> into) {
            for (Entry e = head; e != null; e = e.next) {
                into.add(e.task);
            }
        }
    }

    private final Shard[] shards;
    /** Set once by close(); read by add() under a shard lock. */
    private volatile boolean closing;
    /** The thread waiting in close(), or null. Written by the closer, read by ending tasks. */
    private volatile Thread closer;

    LiveTasks(int workers) {
        int n = Integer.highestOneBit(Math.max(1, workers * 4) * 2 - 1);
        shards = new Shard[n];
        for (int i = 0; i < n; i++) {
            shards[i] = new Shard();
        }
    }

    /** Registers {@code task}; returns its entry (the fiber's Runnable), or null once closing. */
    Entry add(RawTask task) {
        long id = Thread.currentThread().threadId();
        Shard shard = shards[(int) (id ^ (id >>> 16)) & (shards.length - 1)];
        return shard.add(task);
    }

    /** Starts closing: later adds are refused; returns every task still registered. */
    List<RawTask> close(Thread waiter) {
        closing = true;
        closer = waiter;
        return snapshot();
    }

    /** Stops unparking the closer. */
    void closerDone() {
        closer = null;
    }

    boolean isClosing() {
        return closing;
    }

    /** Returns the registered tasks (a snapshot). */
    List<RawTask> snapshot() {
        List<RawTask> tasks = new ArrayList<>();
        for (Shard shard : shards) {
            shard.copyTo(tasks);
        }
        return tasks;
    }

    /** Returns how many tasks are registered now. */
    int size() {
        int n = 0;
        for (Shard shard : shards) {
            n += shard.size();
        }
        return n;
    }
}
