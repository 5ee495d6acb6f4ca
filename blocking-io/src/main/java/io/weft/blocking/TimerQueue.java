package io.weft.blocking;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimerHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * BlockingIo's timers: a sorted set of (deadline, sequence) entries under one lock. Thread-safe.
 *
 * <p>Any thread waiting in its BlockingIo fires every due timer, whichever thread armed it: a
 * timer only readies a token, and readying unparks that token's owner wherever it waits.
 */
final class TimerQueue {
    /*
     * Implementation notes.
     *
     * A TreeSet gives O(log n) insert, cancel and earliest-deadline; cancel removes the entry at
     * once, so cancelled sleeps (every timed-out race, every cancelled sleeper) leave nothing
     * behind. The sequence number breaks ties in arming order and keeps entries distinct.
     * Timers are fired outside the lock: readying a token runs no user code, but it unparks a
     * thread, which is better done without holding the lock it may want next.
     * A deadline of Io.NO_DEADLINE is stored (so it can be cancelled) but never fires and is never
     * reported as the next deadline: a virtual clock must not jump to the end of time.
     */

    private final TreeSet<Entry> entries = new TreeSet<>();
    private long nextSequence;

    /** One armed timer. */
    final class Entry implements TimerHandle, Comparable<Entry> {
        final long deadlineMs;
        final long sequence;
        final ParkToken park;

        Entry(long deadlineMs, long sequence, ParkToken park) {
            this.deadlineMs = deadlineMs;
            this.sequence = sequence;
            this.park = park;
        }

        @Override
        public boolean cancel() {
            synchronized (TimerQueue.this) {
                return entries.remove(this);
            }
        }

        @Override
        public int compareTo(Entry other) {
            int byDeadline = Long.compare(deadlineMs, other.deadlineMs);
            return byDeadline != 0 ? byDeadline : Long.compare(sequence, other.sequence);
        }

        @Override
        public String toString() {
            return "Timer[at " + deadlineMs + " ms, " + park + "]";
        }
    }

    synchronized Entry arm(long deadlineMs, ParkToken park) {
        Entry entry = new Entry(deadlineMs, nextSequence++, park);
        entries.add(entry);
        return entry;
    }

    /** Removes the timers due at {@code nowMs} and returns their tokens, earliest first. */
    synchronized List<ParkToken> takeDue(long nowMs) {
        List<ParkToken> due = new ArrayList<>();
        while (!entries.isEmpty()) {
            Entry first = entries.first();
            if (first.deadlineMs > nowMs || first.deadlineMs == Io.NO_DEADLINE) {
                break;
            }
            entries.pollFirst();
            due.add(first.park);
        }
        return due;
    }

    /** Returns the earliest deadline that will ever fire, or {@link Io#NO_DEADLINE}. */
    synchronized long nextDeadline() {
        return entries.isEmpty() ? Io.NO_DEADLINE : entries.first().deadlineMs;
    }

    synchronized int size() {
        return entries.size();
    }
}
