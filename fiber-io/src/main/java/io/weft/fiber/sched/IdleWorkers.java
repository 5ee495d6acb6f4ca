package io.weft.fiber.sched;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which workers are parked and how many are searching for work: decides who to wake when work
 * arrives. Thread-safe.
 */
final class IdleWorkers {
    /*
     * Implementation notes.
     *
     * State: one AtomicLong packs the number of searching workers (low 32 bits) and of unparked
     * workers (high 32 bits), so "should a producer wake someone?" is one volatile read, after
     * a full fence (see "Lost wake-up"): nobody is searching and somebody is parked. The parked
     * set is a bitmap (bit i = worker i parked; at most 64 workers), changed only under `this`
     * lock together with the counts, so a worker is handed out to exactly one notifier.
     *
     * Protocols (Tokio's, with the bitmap from the seed design):
     *   - A producer pushes its task, then calls workerToNotify(): the fast path reads the state
     *     and returns -1 while a searcher exists (it will find the task) or nobody is parked.
     *     Otherwise, under the lock, it removes the lowest parked worker from the bitmap and
     *     counts it as unparked AND searching before waking it.
     *   - At most half the workers search at once (tryBecomeSearcher), so a burst of work does
     *     not wake a thundering herd; each searcher that finds work and was the LAST searcher
     *     wakes another (transitionFromSearching returns true): the chain reaction that spreads
     *     work without waking everyone up front.
     *   - A worker going to park calls transitionToParked; if it was the last searcher, it must
     *     re-check every queue and wake a worker if work is pending ("last searcher must
     *     notify"), because producers skipped notifying while it was searching.
     *   - Lost wake-up: a producer pushes then reads the state; a parking worker writes the
     *     state (fewer unparked, an atomic read-modify-write) then re-checks the queues (Dekker).
     *     One of the two must see the other, which needs the producer's push ordered before its
     *     read. An Injector push is a CAS, but a worker's push to its own RunQueue (a spawn
     *     behind a full LIFO slot, a yield's or a fired timer's push back, a LIFO eviction) ends
     *     with a release store of the tail, which a later volatile read may pass (store-load
     *     reordering; a store buffer does it on x86): the producer then sees the worker still
     *     awake, the worker sees the queue empty, and it sleeps its park timeout with stealable
     *     work queued (the owner still runs it: late, never lost). workerToNotify therefore
     *     starts with a full fence (Tokio reads its state with a SeqCst read-modify-write for the
     *     same reason; a fence writes no shared cache line). Filling an empty LIFO slot notifies
     *     nobody (only the owner runs it), and the re-check before parking skips the slots. The
     *     fence is redundant after a CAS (an Injector push, transitionFromSearching): kept in
     *     one place for every caller. Cost: one fenced instruction per RunQueue push that
     *     notifies (BENCHMARKS.md, 2026-12-03); IdleWorkersLocalPushVsParkTest (jcstress) and
     *     its mutant, without the fence, show the race.
     *   - A worker that wakes by itself (timeout) calls unparkWorkerById: if its bit is still
     *     set it removes it (it was not notified); if a notifier already removed it, the notifier
     *     counted it as searching, and the worker must search.
     *
     * Alternatives: Tokio keeps a Vec of sleepers; the bitmap picks the lowest parked worker in
     * O(1) (Long.numberOfTrailingZeros) and makes the choice deterministic for a given state.
     */

    private static final long ONE_UNPARKED = 1L << 32;
    private static final long SEARCHING_MASK = 0xFFFF_FFFFL;

    /**
     * How many workers take part: the configured ones plus the spares started for stalled workers
     * and not retired. Changed only under `this` lock, with the counts (activate, retire).
     */
    private volatile int workers;
    /** Packed counts: searching (low), unparked (high). Written by every worker and notifier. */
    private final AtomicLong state;
    /** Bit i set = worker i parked. Guarded by this. */
    private long parked;

    IdleWorkers(int workers) {
        if (workers < 1 || workers > 64) {
            throw new IllegalArgumentException("workers must be 1..64, got " + workers);
        }
        this.workers = workers;
        this.state = new AtomicLong(workers * ONE_UNPARKED);
    }

    /**
     * Counts spare worker {@code index} in, as unparked and searching (it starts by stealing); the
     * caller then starts its thread.
     */
    synchronized void activate(int index) {
        if (index < 0 || index > 63 || (parked & (1L << index)) != 0) {
            throw new IllegalStateException("worker " + index + " cannot be activated");
        }
        workers++;
        state.addAndGet(ONE_UNPARKED + 1);
    }

    /** Undoes {@link #activate} for a spare whose thread could not start (it never ran). */
    synchronized void deactivate(int index) {
        workers--;
        state.addAndGet(-(ONE_UNPARKED + 1));
    }

    /**
     * Takes spare worker {@code index}, which went through {@link #transitionToParked} and found
     * no work, out for good: returns true if it was still in the parked set (it retires; nobody
     * will wake it), false if a notifier took it meanwhile (counted unparked and searching: it
     * must search instead, as after a park).
     */
    synchronized boolean retire(int index) {
        long bit = 1L << index;
        if ((parked & bit) == 0) {
            return false;
        }
        parked &= ~bit;
        workers--;
        return true;
    }

    /** How many workers take part now (configured plus active spares). */
    int active() {
        return workers;
    }

    /** Returns how many workers are searching for work. */
    int searching() {
        return (int) (state.get() & SEARCHING_MASK);
    }

    /** Returns whether worker {@code index} is not parked now (for metrics). */
    synchronized boolean isUnparked(int index) {
        return (parked & (1L << index)) == 0;
    }

    /** Returns how many workers are not parked. */
    int unparked() {
        return (int) (state.get() >>> 32);
    }

    /**
     * Picks a parked worker to wake because work arrived, or returns -1 if none should be woken
     * (a searcher will find the work, or every worker is awake). The picked worker is counted as
     * unparked and searching; the caller must unpark it.
     */
    int workerToNotify() {
        VarHandle.fullFence(); // the caller's push (maybe a release store) before the read: see "Lost wake-up"
        if (!shouldWake(state.get())) {
            return -1;
        }
        synchronized (this) {
            if (!shouldWake(state.get()) || parked == 0) {
                return -1;
            }
            int worker = Long.numberOfTrailingZeros(parked);
            parked &= ~(1L << worker);
            state.addAndGet(ONE_UNPARKED + 1);
            return worker;
        }
    }

    private boolean shouldWake(long s) {
        return (s & SEARCHING_MASK) == 0 && (s >>> 32) < workers;
    }

    /**
     * Tries to count the caller as a searcher; false if half the workers (rounded down, at least
     * one) already search.
     */
    boolean tryBecomeSearcher() {
        long limit = Math.max(1, workers / 2);
        while (true) {
            long s = state.get();
            long searching = s & SEARCHING_MASK;
            if (searching >= limit) {
                return false;
            }
            if (state.compareAndSet(s, s + 1)) {
                return true;
            }
        }
    }

    /** A searcher found work; returns true if it was the last searcher (it must wake another). */
    boolean transitionFromSearching() {
        long previous = state.getAndDecrement();
        return (previous & SEARCHING_MASK) == 1;
    }

    /**
     * Records that {@code worker} is about to park; returns true if it was the last searcher, in
     * which case the caller must re-check every queue and wake a worker if work is pending.
     */
    synchronized boolean transitionToParked(int worker, boolean wasSearching) {
        long delta = -ONE_UNPARKED - (wasSearching ? 1 : 0);
        long previous = state.getAndAdd(delta);
        parked |= 1L << worker;
        return wasSearching && (previous & SEARCHING_MASK) == 1;
    }

    /**
     * Marks {@code worker} unparked after it woke up; returns true if it was still in the parked
     * set (it woke by itself), false if a notifier had already taken it (it must search).
     */
    synchronized boolean unparkWorkerById(int worker) {
        long bit = 1L << worker;
        if ((parked & bit) == 0) {
            return false;
        }
        parked &= ~bit;
        state.addAndGet(ONE_UNPARKED);
        return true;
    }

    /** Returns whether {@code worker} is in the parked set. */
    synchronized boolean isParked(int worker) {
        return (parked & (1L << worker)) != 0;
    }

    @Override
    public String toString() {
        return "IdleWorkers[searching=" + searching() + ", unparked=" + unparked() + "/" + workers + "]";
    }
}
