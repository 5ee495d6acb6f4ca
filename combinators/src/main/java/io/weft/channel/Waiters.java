package io.weft.channel;

import io.weft.Io;
import io.weft.ParkToken;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One waiter list of a {@link Channel} (senders waiting for space, or receivers waiting for items)
 * with its "someone may be waiting" flag. Thread-safe. Package-private; the jcstress tests in the
 * stress module drive {@link #announce()} and {@link #hasWaiters()} directly.
 */
final class Waiters {
    /*
     * Implementation notes.
     *
     * State: a FIFO intrusive doubly-linked list of Nodes and the `waiting` flag, both guarded by
     * `lock` for writes; the flag is also read without the lock by the fast path (volatile).
     * Invariant under the lock: list non-empty implies waiting == true. The flag may be true with
     * an empty list (a registration whose re-check succeeded, a wake-up race): that only costs one
     * lock round trip in wakeOne.
     *
     * The Dekker protocol (DESIGN §5): the fast path does its ring write (volatile) and THEN reads
     * `waiting` (volatile); a registering waiter writes `waiting = true` (volatile) and THEN
     * re-checks the ring (volatile reads). All four are sequentially consistent, so at least one
     * side sees the other: the waiter finds the item/space, or the fast path sees the flag and
     * wakes a waiter. The re-check and the link happen under the lock, so a waker (which pops
     * under the lock) either runs before the registration (and the re-check sees its ring write)
     * or after the node is linked (and pops it): never between.
     *
     * Nodes are woken OUTSIDE the lock (Io.ready may do real work) and, being popped, are never
     * woken twice. A woken node that then finds nothing re-registers with a new node.
     */

    /** One parked sender or receiver. Fields other than io/token are guarded by the lock. */
    static final class Node {
        final Io io;
        final ParkToken token;
        Node prev;
        Node next;
        boolean linked;

        Node(Io io, ParkToken token) {
            this.io = io;
            this.token = token;
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    /** Oldest waiter, or null. Guarded by lock. */
    private Node first;
    /** Newest waiter, or null. Guarded by lock. */
    private Node last;
    /**
     * Whether a waiter may be in the list. Written under the lock by registrations and pops;
     * read without the lock by the fast path (volatile: the Dekker flag).
     */
    private volatile boolean waiting;

    /** The fast path's half of the Dekker protocol: may a waiter need waking? */
    boolean hasWaiters() {
        return waiting;
    }

    /** The waiter's half of the Dekker protocol: raise the flag before re-checking the ring. */
    void announce() {
        waiting = true;
    }

    /**
     * Raises the flag, then runs {@code recheck} under the lock; if it returns non-null, returns
     * that (nothing is linked); else links {@code node} and returns null: the caller parks.
     */
    <R> R linkUnless(Node node, Supplier<R> recheck) {
        lock.lock();
        try {
            announce();
            R ready = recheck.get();
            if (ready != null) {
                if (first == null) {
                    waiting = false;
                }
                return ready;
            }
            node.prev = last;
            if (last == null) {
                first = node;
            } else {
                last.next = node;
            }
            last = node;
            node.linked = true;
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes the oldest waiter, if the flag says there may be one. */
    void wakeOne() {
        if (!waiting) {
            return;
        }
        Node woken;
        lock.lock();
        try {
            woken = first;
            if (woken != null) {
                unlink(woken);
            }
            if (first == null) {
                waiting = false;
            }
        } finally {
            lock.unlock();
        }
        if (woken != null) {
            woken.io.ready(woken.token);
        }
    }

    /** Wakes every waiter (close). */
    void wakeAll() {
        Node all;
        lock.lock();
        try {
            all = first;
            for (Node n = all; n != null; n = n.next) {
                n.linked = false;
            }
            first = null;
            last = null;
            waiting = false;
        } finally {
            lock.unlock();
        }
        for (Node n = all; n != null; ) {
            Node next = n.next;
            n.prev = null;
            n.next = null;
            n.io.ready(n.token);
            n = next;
        }
    }

    /**
     * Removes {@code node} after its park ended exceptionally (cancelled). Returns whether it had
     * already been popped by a waker: that wake-up was meant for someone who can use it, so the
     * caller must pass it on with {@link #wakeOne()}.
     */
    boolean leave(Node node) {
        lock.lock();
        try {
            if (!node.linked) {
                return true;
            }
            unlink(node);
            if (first == null) {
                waiting = false;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** How many waiters are linked right now (for tests and diagnostics). */
    int size() {
        lock.lock();
        try {
            int n = 0;
            for (Node node = first; node != null; node = node.next) {
                n++;
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    private void unlink(Node node) {
        Node p = node.prev;
        Node n = node.next;
        if (p == null) {
            first = n;
        } else {
            p.next = n;
        }
        if (n == null) {
            last = p;
        } else {
            n.prev = p;
        }
        node.prev = null;
        node.next = null;
        node.linked = false;
    }
}
