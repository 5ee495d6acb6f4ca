package io.weft.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A deliberately broken copy of {@link WaiterStack}'s completion handshake: a done flag, a
 * Treiber stack of actions, a completer that only reads an empty stack, and a pusher that does
 * NOT look at the done flag again after its push. It exists only to show that
 * {@link TaskOnDoneVsCompleteTest} can fail; never use it for anything else.
 */
final class MutantWaiterStack {
    /*
     * Implementation notes: the protocol, reduced.
     *   complete: done = true (volatile); if the head is null, return; else take the stack and run
     *             each node's action (getAndSet to null).
     *   push:     CAS the node in (refused if the head is the DONE sentinel); the real stack then
     *             re-reads done and takes its action back. This copy skips that step: a push that
     *             lands after the completer read an empty stack is never run, and since `done` was
     *             false when onDone looked first, nobody runs it (a lost wake-up).
     */

    private static final VarHandle HEAD;
    private static final Node DONE = new Node(null);

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(MutantWaiterStack.class, "head", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One registered action. */
    static final class Node {
        final Runnable action;
        Node next;

        Node(Runnable action) {
            this.action = action;
        }
    }

    private volatile boolean done;
    private volatile Node head;

    /** Completes: publishes done, then runs the registered actions (none if the stack looked empty). */
    void complete() {
        done = true;
        if (head == null) {
            return;
        }
        for (Node n = (Node) HEAD.getAndSet(this, DONE); n != null && n != DONE; n = n.next) {
            n.action.run();
        }
    }

    /** Registers {@code action}, or runs it here if the stack is already closed. */
    void onDone(Runnable action) {
        if (done) {
            action.run();
            return;
        }
        Node node = new Node(action);
        while (true) {
            Node h = head;
            if (h == DONE) {
                action.run();
                return;
            }
            node.next = h;
            if (HEAD.compareAndSet(this, h, node)) {
                return; // BUG: the real stack re-reads `done` here and takes the action back if it is set
            }
        }
    }
}
