package io.weft.channel;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The data path of a {@link Channel}: a lock-free bounded MPMC ring of exactly {@code capacity}
 * slots (Vyukov's per-slot sequence numbers), with a closed mark on the tail. Thread-safe.
 * Package-private; the jcstress tests in the stress module drive it directly.
 */
final class Ring<T> {
    /*
     * Implementation notes.
     *
     * Positions: head and tail count positions from 0; position p lives in slot p % capacity.
     * Modulo instead of Vyukov's mask keeps the capacity the user asked for (a power-of-two
     * ring would silently hold more); a long division per operation is noise next to the CAS.
     *
     * Slot sequence (who writes / reads): 2p means "free for position p", 2p + 1 means "full with
     * the item of position p". A producer that claimed p (CAS tail) writes the item, then
     * sequence = 2p + 1; a consumer that claimed p (CAS head) reads the item, clears it, then
     * sequence = 2(p + capacity). Vyukov's original encoding (p, then p + 1) cannot tell "full with
     * p" from "free for p + 1" when capacity is 1; doubling it can, so capacity 1 is exact.
     *
     * Memory ordering: the item array is plain; the sequence store publishes it and the
     * sequence load that sees it acquires it. The sequence stores are VOLATILE (seq_cst), not
     * release, on purpose: they are the "data" half of the Dekker protocol with the waiter flags
     * (see Waiters). A release store followed by the flag's volatile load may be reordered
     * (StoreLoad, even on x86), and the channel would lose a wake-up.
     *
     * Closing: bit 0 of tail is the closed mark; positions are tail >>> 1. close() sets the mark
     * with a CAS, so every producer's claim CAS either precedes it (its item will be published and
     * drained) or fails and sees the mark: no item enters after close. The ring is drained when it
     * is closed and head has caught up with tail's position.
     *
     * Settled answers: poll() and offer() are wait-free and may report "empty" while a producer
     * has claimed the head position and not yet published it (or "full" while a consumer has
     * claimed the oldest item and not yet freed its slot), even if a later position's operation
     * already completed. That is fine for the waiting paths (the publish or the free wakes the
     * waiter), but an answer handed to the caller would not be linearizable: a thread whose
     * trySend returned true could then see tryReceive return null on an otherwise idle channel
     * (Lincheck found exactly that: ChannelLincheckTest). pollSettled()/offerSettled() wait out
     * that window, the few instructions between the other thread's claim CAS and its publish,
     * so "empty" means head == tail at one instant and "full" means capacity positions claimed by
     * producers at one instant. The wait spins, then yields; it is as long as the other thread is
     * descheduled inside the window (no Weft code suspends there).
     */

    /** What {@link #offer} did. */
    enum Offer {
        /** The item is in the ring. */
        ADDED,
        /** Every slot holds an item (or one is being freed right now): try again later. */
        FULL,
        /** The ring is closed: the item was not added and never will be. */
        CLOSED
    }

    private static final long CLOSED_MARK = 1L;
    private static final long ONE_POSITION = 2L;

    private final int capacity;
    /** Slot sequences, see the notes. Written by the claimant of the slot, read by everyone. */
    private final AtomicLongArray sequences;
    /** Items; published by the slot's sequence. Written and cleared by the slot's claimant. */
    private final Object[] items;
    /** Next position to take. CAS by consumers. */
    private final AtomicLong head = new AtomicLong();
    /** (next position to fill << 1) | closed mark. CAS by producers and close(). */
    private final AtomicLong tail = new AtomicLong();

    /** A test seam: runs between a producer's claim and its publish; null in production. */
    private final java.util.function.LongConsumer afterClaim;

    /** The largest capacity: the longest array the JVM reliably makes (the JDK's own soft limit). */
    static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

    Ring(int capacity) {
        this(capacity, null);
    }

    Ring(int capacity, java.util.function.LongConsumer afterClaim) {
        this.afterClaim = afterClaim;
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        if (capacity > MAX_CAPACITY) { // e.g. Integer.MAX_VALUE meant as "unbounded": the JVM makes no such array
            throw new IllegalArgumentException("capacity must be at most " + MAX_CAPACITY
                    + " (the ring is allocated up front, 12 bytes a slot), was " + capacity);
        }
        this.capacity = capacity;
        this.sequences = new AtomicLongArray(capacity);
        this.items = new Object[capacity];
        for (int i = 0; i < capacity; i++) {
            sequences.set(i, 2L * i);
        }
    }

    int capacity() {
        return capacity;
    }

    /** Adds {@code item} unless the ring is full or closed. Never blocks. */
    Offer offer(T item) {
        while (true) {
            long t = tail.get();
            if ((t & CLOSED_MARK) != 0) {
                return Offer.CLOSED;
            }
            long position = t >>> 1;
            int slot = (int) (position % capacity);
            long diff = sequences.get(slot) - 2 * position;
            if (diff == 0) {
                if (tail.compareAndSet(t, t + ONE_POSITION)) {
                    if (afterClaim != null) {
                        afterClaim.accept(position);
                    }
                    items[slot] = item;
                    sequences.set(slot, 2 * position + 1); // volatile: the Dekker "data" write
                    return Offer.ADDED;
                }
            } else if (diff < 0 && tail.get() == t) {
                // The slot still holds (or is just giving up) the item of position - capacity.
                return Offer.FULL;
            }
            // else another producer moved tail on: retry with the new one
        }
    }

    /** Takes the oldest published item, or returns null if none is published right now. */
    @SuppressWarnings("unchecked")
    T poll() {
        while (true) {
            long h = head.get();
            int slot = (int) (h % capacity);
            long diff = sequences.get(slot) - (2 * h + 1);
            if (diff == 0) {
                if (head.compareAndSet(h, h + 1)) {
                    T item = (T) items[slot];
                    items[slot] = null;
                    sequences.set(slot, 2 * (h + capacity)); // volatile: the Dekker "space" write
                    return item;
                }
            } else if (diff < 0 && head.get() == h) {
                // Empty, or the producer of position h has claimed it and not yet published.
                return null;
            }
        }
    }

    /**
     * Like {@link #poll}, but returns null only if the ring was empty at one instant: a head
     * position claimed by a producer and not yet published is waited for (see the notes).
     */
    T pollSettled() {
        for (int spins = 0; ; spins++) {
            T item = poll();
            if (item != null || !hasPending()) {
                return item;
            }
            backOff(spins);
        }
    }

    /**
     * Like {@link #offer}, but returns {@link Offer#FULL} only if every slot held an item (published
     * or being published) at one instant: a slot whose consumer claimed it and has not yet freed it
     * is waited for (see the notes).
     */
    Offer offerSettled(T item) {
        for (int spins = 0; ; spins++) {
            Offer offer = offer(item);
            if (offer != Offer.FULL || !hasRoom()) {
                return offer;
            }
            backOff(spins);
        }
    }

    /** Waits for another thread to finish the few instructions between its claim and its publish. */
    private static void backOff(int spins) {
        if (spins < 64) {
            Thread.onSpinWait();
        } else {
            Thread.yield(); // it was descheduled inside the window: let it run
        }
    }

    /** Sets the closed mark; returns whether this call set it. */
    boolean close() {
        while (true) {
            long t = tail.get();
            if ((t & CLOSED_MARK) != 0) {
                return false;
            }
            if (tail.compareAndSet(t, t | CLOSED_MARK)) {
                return true;
            }
        }
    }

    /** Whether some position between head and tail holds an item or is claimed by a producer. */
    boolean hasPending() {
        return head.get() < (tail.get() >>> 1);
    }

    /** Whether fewer positions are taken than the capacity (a slot may still be being freed). */
    boolean hasRoom() {
        return (tail.get() >>> 1) - head.get() < capacity;
    }

    boolean isClosed() {
        return (tail.get() & CLOSED_MARK) != 0;
    }

    /** Whether the ring is closed and every item that entered it has been taken. */
    boolean isClosedAndDrained() {
        long t = tail.get(); // read first: once closed, tail no longer moves
        return (t & CLOSED_MARK) != 0 && head.get() == t >>> 1;
    }
}
