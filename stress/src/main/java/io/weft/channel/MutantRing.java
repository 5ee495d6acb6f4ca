package io.weft.channel;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A deliberately broken copy of {@link Ring} and of a {@link Waiters} flag for
 * {@link ChannelWakeupFlagsMutantTest}: the slot sequences are published with {@code setRelease}
 * and read with {@code getAcquire}, and the flag likewise, instead of volatile (seq_cst). That is
 * enough for the data to be published safely, but not for the Dekker protocol: a release store
 * followed by an acquire load of another variable may be reordered (StoreLoad, even on x86).
 * Not Weft's code; do not use.
 */
final class MutantRing {
    private final int capacity;
    private final AtomicLongArray sequences;
    private final Object[] items;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tail = new AtomicLong();
    /** The waiter flag, with the MUTANT's release/acquire accesses. */
    private final AtomicLong waiting = new AtomicLong();

    MutantRing(int capacity) {
        this.capacity = capacity;
        this.sequences = new AtomicLongArray(capacity);
        this.items = new Object[capacity];
        for (int i = 0; i < capacity; i++) {
            sequences.set(i, 2L * i);
        }
    }

    boolean offer(Object item) {
        while (true) {
            long t = tail.get();
            long position = t >>> 1;
            int slot = (int) (position % capacity);
            long diff = sequences.getAcquire(slot) - 2 * position;
            if (diff == 0) {
                if (tail.compareAndSet(t, t + 2)) {
                    items[slot] = item;
                    sequences.setRelease(slot, 2 * position + 1); // MUTANT: release, not volatile
                    return true;
                }
            } else if (diff < 0 && tail.get() == t) {
                return false;
            }
        }
    }

    Object poll() {
        while (true) {
            long h = head.get();
            int slot = (int) (h % capacity);
            long diff = sequences.getAcquire(slot) - (2 * h + 1);
            if (diff == 0) {
                if (head.compareAndSet(h, h + 1)) {
                    Object item = items[slot];
                    items[slot] = null;
                    sequences.setRelease(slot, 2 * (h + capacity)); // MUTANT: release, not volatile
                    return item;
                }
            } else if (diff < 0 && head.get() == h) {
                return null;
            }
        }
    }

    void announce() {
        waiting.setRelease(1); // MUTANT: release, not volatile
    }

    boolean hasWaiters() {
        return waiting.getAcquire() != 0; // MUTANT: acquire, not volatile
    }
}
