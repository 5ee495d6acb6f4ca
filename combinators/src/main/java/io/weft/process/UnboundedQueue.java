package io.weft.process;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** An unbounded mailbox: a lock-free multi-producer single-consumer linked queue that can close. */
final class UnboundedQueue<M> implements MessageQueue<M> {
    /*
     * Implementation notes.
     *
     * A singly linked list from `head` (a dummy owned by the consumer) to `tail`. A put appends
     * with one CAS on tail, then links its predecessor to it (a release store). Closing appends
     * a node marked `end` the same way; a put that finds the end node as its tail fails, so a put
     * either CASed before the close (its message is queued ahead of the end and drained) or sees
     * the close. Nothing is ever appended after the end node.
     *
     * Between a put's CAS and its link, the message is queued but not reachable from head. poll()
     * waits for that link when head is not the tail: the putter is two instructions from done and
     * blocks on nothing, and a message whose put has returned must not be missed (the process's
     * message count, which the putter raises after put returns, promises the consumer a message).
     *
     * Shared fields: tail (CAS by putters and close, read by the consumer), Node.next (written once
     * by the putter that appended the next node, release; read by the consumer, acquire),
     * Node.message (written before the CAS that publishes the node; read and cleared by the one
     * consumer). head is the consumer's alone. Per put: one allocation, one CAS, one release store.
     */

    private static final VarHandle TAIL;
    private static final VarHandle NEXT;
    private static final int SPINS_BEFORE_YIELD = 64;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TAIL = lookup.findVarHandle(UnboundedQueue.class, "tail", Node.class);
            NEXT = lookup.findVarHandle(Node.class, "next", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final class Node {
        Object message;
        final boolean end;

        @SuppressWarnings("unused") // through NEXT
        private Node next;

        Node(Object message, boolean end) {
            this.message = message;
            this.end = end;
        }
    }

    /** The consumer's dummy: the queued messages are in the nodes after it. */
    private Node head;

    @SuppressWarnings("unused") // through TAIL
    private volatile Node tail;

    UnboundedQueue() {
        Node dummy = new Node(null, false);
        head = dummy;
        tail = dummy;
    }

    @Override
    public boolean put(M message) {
        return append(new Node(Objects.requireNonNull(message, "message"), false));
    }

    @Override
    public int tryPut(M message) {
        return put(message) ? 1 : -1;
    }

    @Override
    public void close() {
        append(new Node(null, true));
    }

    /** Appends {@code node} unless the end is already queued; see the notes. */
    private boolean append(Node node) {
        Node t;
        do {
            t = (Node) TAIL.getAcquire(this);
            if (t.end) {
                return false;
            }
        } while (!TAIL.weakCompareAndSet(this, t, node));
        NEXT.setRelease(t, node);
        return true;
    }

    @Override
    public M poll() {
        Node h = head;
        Node next = (Node) NEXT.getAcquire(h);
        for (int spins = 0; next == null; spins++) {
            if (TAIL.getAcquire(this) == h) {
                return null;
            }
            if (spins < SPINS_BEFORE_YIELD) {
                Thread.onSpinWait();
            } else {
                Thread.yield(); // the putter was descheduled between its CAS and its link
            }
            next = (Node) NEXT.getAcquire(h);
        }
        if (next.end) {
            return null;
        }
        @SuppressWarnings("unchecked") // only messages of type M are put
        M message = (M) next.message;
        next.message = null;
        head = next;
        return message;
    }

    @Override
    public List<M> drain() {
        List<M> left = new ArrayList<>();
        for (M message = poll(); message != null; message = poll()) {
            left.add(message);
        }
        return left;
    }
}
