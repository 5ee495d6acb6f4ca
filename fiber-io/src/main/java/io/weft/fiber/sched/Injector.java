package io.weft.fiber.sched;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The scheduler's global queue: a FIFO of tasks submitted from outside any worker, and of the
 * halves that workers move out of their full {@link RunQueue}s (plus, with the heap full, a few
 * rescued wake-ups outside that order: see the notes, "Rescue slots"). Thread-safe: any thread may push,
 * any worker may pop.
 *
 * <p>A push never blocks and never waits for a popper. Workers fetch in batches, so the poppers'
 * lock is taken once per batch, not once per task:
 *
 * <pre>{@code
 * int n = injector.popBatch(buffer, Math.min(buffer.length,
 *         Injector.fairShare(injector.size(), workerCount)));
 * }</pre>
 *
 * <p>Not final only so that a test can make a push fail as it would without memory for its nodes
 * ({@code RunQueueTest}); the library has no subclass, so the JIT still binds every call statically.
 */
class Injector {
    /*
     * Implementation notes.
     *
     * Overview: a singly linked list of nodes from `head` to `tail`. `head` is a dummy: the
     * queued tasks are in the nodes after it. Pushers append with one CAS on `tail` and no lock;
     * poppers take a lock among themselves (popLock) and walk forward from `head`. Pushing is the
     * path of every task spawned from outside the workers, so it is the side kept free of locks;
     * popping happens once per fetched batch, by a worker whose local queue ran dry.
     *
     *   push(task)   node = new Node(task); loop { t = tail; node.seq = t.seq + 1;
     *                CAS tail t -> node }; then t.next = node (release): the "link"
     *   pushBatch    the nodes are chained privately first, then appended as one: one CAS of
     *                tail to the last node (seqs renumbered on a retry), then one link
     *   popBatch     under popLock: for each task, next = h.next (acquire), take its task, and
     *                next becomes the dummy h; then one head = h (release) for the whole batch,
     *                so size() and isEmpty() see a batch taken all at once or not at all
     *
     * Between a pusher's CAS and its link, the node is in the queue (counted by size(), tail
     * says so) but a popper walking from head cannot reach it yet. A popper that finds
     * head.next == null while tail != head waits for that link (onSpinWait, then yielding the
     * CPU): the pusher is two plain instructions from done and blocks on nothing, so the wait
     * ends as soon as it is scheduled. Giving up instead would make pop look empty while size()
     * says otherwise, which is not linearizable, and a worker that gave up would spin back
     * anyway, since isEmpty() stays false.
     *
     * Shared fields:
     *   tail      changed only by CAS (pushers); read by pushers, poppers, size() and isEmpty().
     *   head      written only under popLock (release), read by size() and isEmpty() without it.
     *   Node.next written once, by the pusher that appended the node after it (release), and
     *             then once more by the popper that retires the node (a self-link, below); read by
     *             poppers with acquire.
     *   Node.seq  written by the pusher before its CAS publishes the node; read after that only.
     *   Node.task written by the pusher before its CAS, read and nulled by the one popper that
     *             takes it (under popLock).
     *
     * Memory ordering: a node's task and seq are written before the CAS that makes it the tail
     * and before the release store that links it, so a popper's acquire load of the link, or any
     * thread's volatile read of tail, sees them. Poppers are ordered by popLock. size() is
     * tail.seq - head.seq, reading head first: tail only moves forward and head never passes
     * it, so the later tail is never behind the earlier head and the difference is never
     * negative. It is a hint, not linearizable: a popBatch decides it has reached the end (it
     * reads tail == its dummy) before it publishes head, so a push landing in between is
     * counted with the tasks already taken (Lincheck showed this when size was among its
     * operations). Only fairShare uses it. seq is an int that wraps; the subtraction is exact
     * while fewer than 2^31 tasks are queued. isEmpty()'s look at the nodes is exact: head ==
     * tail, read in that order, can only hold if they were equal when head was read; a stale
     * head only makes it answer "not empty", and a worker then looks again (the rescue slots'
     * count is read after: see "Rescue slots").
     *
     * GC: a popped node's task is nulled at once, and a retired dummy links to itself, so a
     * retired node that reached the old generation does not keep younger nodes reachable.
     *
     * Budget per push: one allocation (a 24-byte node), one CAS (more only when pushers race),
     * one release store, no lock. Per popBatch: one lock acquisition and one acquire load and
     * two plain stores per task taken and one release store. (Before: a ReentrantLock around an ArrayDeque for both
     * sides. In spawn_many_remote_idle the spawning thread spent ~45% of its CPU samples in
     * Injector.push, much of it in the lock that the workers' popBatch held.)
     *
     * Rescue slots (a wake-up with the heap full). A fiber woken from outside the workers (the
     * JDK's VirtualThread-unblocker thread, when a monitor it was blocked on is released; another
     * scheduler's thread) is queued here, and the JDK retries that submission every 100 ms for
     * as long as it throws OutOfMemoryError. While the program holds the heap full, every retry
     * failed at `new Node`, and a program that frees memory only once that fiber has run (its
     * task fails, its awaiter fails, the caller drops what it kept) hung for good: seen in
     * OutOfMemoryProbe (mode task: up to a thousand tasks blocked on the list they add to, woken
     * one by one by the unblocker), the unblocker in its retry, both workers idle. So
     * pushWakeUp, which the scheduler uses for these wake-ups, puts the task into one of
     * RESCUE_SLOTS slots made with the injector when its node cannot be allocated, and throws
     * only if every slot is taken. A worker's own wake-ups use the slots the same way when
     * their local push fails (Worker.pushLifo's evicted task, Scheduler.pushBackWakeUp): a full
     * local queue overflows half of itself here, which needs a node per task (seen: a runner
     * completing a task, its awaiter's unpark retried every 100 ms on a worker, pinned). A slot
     * is free again as soon as a worker takes its task, so the slots serve any number of
     * wake-ups, a few at a time (a first version made 32 spare nodes in advance: the monitor's
     * thousand wake-ups used them up, and the probe still hung). Not FIFO with the nodes: a
     * worker takes rescued tasks first, in slot order from a rotating start; this is the path
     * of a full heap, not of a fair one. Cost on every path: one more volatile read in
     * isEmpty(), size() and a fetch.
     *
     *   putRescued   RESCUED += 1 (getAndAdd), then CAS a null slot to the task (scan from 0);
     *                if every slot is taken (or the scan throws), RESCUED -= 1, in a finally
     *   takeRescued  if RESCUED == 0: nothing (one volatile read, the cost on every path);
     *                else getAndSet a non-null slot to null (the scan starts after the slot
     *                last taken, so no slot waits behind refilled ones), then RESCUED -= 1
     *
     * RESCUED counts the slots filled plus the puts in progress, never fewer: a put counts
     * before it fills, a take uncounts after it empties. So a worker that reads 0 has missed no
     * filled slot except one whose put is still in progress, and that put is followed by the
     * pusher's notifyParked, as any push is. A worker that reads more than there are may scan and
     * find nothing, which only costs the scan. isEmpty() and size() count RESCUED too, so every
     * look at the injector (a worker's, the stall watch's, stop()'s drain through pop) sees
     * rescued tasks. Plain spawns (push) get no slot: their caller sees the error (a job that
     * a wake-up evicts from a worker's LIFO slot may get one, being already spawned). popBatch
     * takes rescued tasks first and then, only if the pop lock is free at once, nodes: rescued
     * tasks held in the caller's buffer must not wait behind the lock. Not covered: a throw
     * inside takeRescued between its getAndSet and the return (the JVM's own failure, as in
     * WaiterStack's notes) loses that task; a wake-up rescued while the scheduler stops, after
     * stop() drained the Injector, is left in its slot (a stop with the heap full).
     *
     * What the rescue slots change of the invariants below: isEmpty() answers "empty" when no
     * task was queued at the two moments it read (the node list's ends, then the count), not for
     * one instant; size() counts rescued tasks; the order is FIFO among nodes only; and a take
     * (pop, popBatch) may return nothing while a rescued task was queued all along: its scan is
     * no snapshot, and a task can move behind it (one taken from a slot it has not reached yet,
     * another put into a slot it has passed). The count covers that: a worker looks at isEmpty()
     * before it parks, and RESCUED > 0 sends it back to look again (so does stop()'s drain).
     * InjectorRescueLincheckTest models this with rescue slots only (a take by pop or by a
     * popBatch of one, then isEmpty, again while not empty) against a bag, and checks that each
     * task is taken once; two mutants, run by hand and not kept (a take that is not one
     * getAndSet, a fill that is not one CAS), fail it. InjectorLincheckTest runs with memory,
     * where RESCUED stays 0.
     *
     * Alternatives: an intrusive list through the task records (the seed's design, no
     * allocation) needs a link field in every task, local or not, and ties the injector to the
     * task type, while the injector also carries fibers' continuations. Poppers could be made
     * lock-free too, but batch pops from several consumers then need a far more complex
     * protocol; they are off the hot path.
     */

    /** Upper bound of {@link #fairShare}: a worker never takes more than this in one batch. */
    static final int MAX_BATCH = 64;
    /** Lower bound of {@link #fairShare} (when that many tasks exist): a fetch is worth its lock. */
    static final int MIN_BATCH = 4;
    /** How many times a popper spins for a pending link before it yields the CPU instead. */
    private static final int SPINS_BEFORE_YIELD = 64;

    private static final VarHandle TAIL;
    private static final VarHandle HEAD;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TAIL = lookup.findVarHandle(Injector.class, "tail", Node.class);
            HEAD = lookup.findVarHandle(Injector.class, "head", Node.class);
            NEXT = lookup.findVarHandle(Node.class, "next", Node.class);
            RESCUED = lookup.findVarHandle(Injector.class, "rescued", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** How many wake-ups can wait without a node at once; see the notes, "Rescue slots". */
    static final int RESCUE_SLOTS = 64;

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Runnable[].class);
    private static final VarHandle RESCUED;
    /** What the constructor puts into a rescue slot and takes back, to link those paths. */
    private static final Runnable LINKING = () -> {};

    /** One queued task; see the notes. */
    static final class Node {
        Runnable task;

        @SuppressWarnings("unused") // through NEXT
        private Node next;

        int seq;

        Node(Runnable task) {
            this.task = task;
        }
    }

    /** Serializes poppers; pushers never take it. */
    private final ReentrantLock popLock = new ReentrantLock();
    /** The dummy before the oldest queued node; written under popLock. */
    @SuppressWarnings("unused") // through HEAD
    private volatile Node head;
    /** The newest node; changed only by CAS. */
    @SuppressWarnings("unused") // through TAIL
    private volatile Node tail;

    /** Wake-ups queued without a node (see the notes, "Rescue slots"); null when free. */
    private final Runnable[] rescue = new Runnable[RESCUE_SLOTS];
    /** Where the next scan for a rescued task starts; plain, racy (a hint for fairness). */
    private int takeFrom;
    /** The rescue slots filled, plus puts in progress; see the notes. */
    @SuppressWarnings("unused") // through RESCUED
    private volatile int rescued;

    /** Creates an empty injector. */
    Injector() {
        Node dummy = new Node(null);
        head = dummy;
        tail = dummy;
        // Links the rescue paths' VarHandle call sites now (a call site's first call allocates),
        // not when the heap is full: one put and one take.
        fillRescueSlot(LINKING);
        takeRescued();
    }

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
     * Appends one task. Thread-safe and lock-free.
     *
     * @param task the task, not null
     */
    void push(Runnable task) {
        Node node = newNode(Objects.requireNonNull(task, "task"));
        append(node, node, 1);
    }

    /**
     * Appends {@code task}, a fiber's continuation woken from outside the workers, as {@link
     * #push} does; if there is no memory for its node, it goes into a free rescue slot instead
     * (see the notes, "Rescue slots"). Thread-safe and lock-free.
     *
     * @param task the task, not null
     * @throws OutOfMemoryError if there is no memory for a node and every rescue slot is taken
     *     (the submission then fails, and the JDK tries it again)
     */
    void pushWakeUp(Runnable task) {
        Objects.requireNonNull(task, "task");
        Node node;
        try {
            node = newNode(task);
        } catch (OutOfMemoryError noMemory) {
            if (!putRescued(task)) {
                throw noMemory;
            }
            return;
        }
        append(node, node, 1);
    }

    /** A new node for {@code task}; a test overrides it to fail as an allocation does. */
    Node newNode(Runnable task) {
        return new Node(task);
    }

    /**
     * Queues {@code task}, a wake-up whose queueing elsewhere failed for want of memory (a node
     * here, a worker's overflow), in a free rescue slot, with no allocation; returns false if
     * none is free. Thread-safe and lock-free. See the notes, "Rescue slots".
     */
    boolean putRescued(Runnable task) {
        return fillRescueSlot(task);
    }

    /** putRescued's work (the constructor calls this one: a test's override is not ready then). */
    private boolean fillRescueSlot(Runnable task) {
        RESCUED.getAndAdd(this, 1);
        boolean filled = false;
        try {
            for (int i = 0; i < RESCUE_SLOTS && !filled; i++) {
                filled = (Runnable) SLOT.getAcquire(rescue, i) == null
                        && SLOT.compareAndSet(rescue, i, (Runnable) null, task);
            }
        } finally {
            if (!filled) { // none free, or a throw: a count left up would read "not empty" for good
                RESCUED.getAndAdd(this, -1);
            }
        }
        return filled;
    }

    /** Takes a rescued task, or returns null if there is none (one volatile read). See the notes. */
    private Runnable takeRescued() {
        if ((int) RESCUED.getVolatile(this) == 0) {
            return null;
        }
        int start = takeFrom;
        for (int k = 0; k < RESCUE_SLOTS; k++) {
            int i = (start + k) & (RESCUE_SLOTS - 1);
            if ((Runnable) SLOT.getAcquire(rescue, i) != null) {
                Runnable task = (Runnable) SLOT.getAndSet(rescue, i, (Runnable) null);
                if (task != null) {
                    takeFrom = i + 1; // the next scan starts after it: no slot waits behind refills
                    RESCUED.getAndAdd(this, -1);
                    return task;
                }
            }
        }
        return null;
    }

    /** How many rescue slots hold a task, or are being filled; for tests. Thread-safe. */
    int rescuedCount() {
        return (int) RESCUED.getVolatile(this);
    }

    /**
     * Appends {@code tasks[from .. from + count)} in order, in one step, so the batch stays
     * contiguous. Thread-safe and lock-free. All or nothing: if any element is null, nothing is
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
        Node first = new Node(batch[from]);
        Node last = first;
        for (int i = from + 1; i < from + count; i++) {
            Node node = new Node(batch[i]);
            last.next = node; // private until the CAS in append publishes the chain
            last = node;
        }
        append(first, last, count);
    }

    /** Appends the private chain {@code first .. last} of {@code count} nodes; see the notes. */
    private void append(Node first, Node last, int count) {
        Node t;
        do {
            t = (Node) TAIL.getAcquire(this);
            int seq = t.seq;
            for (Node n = first; ; n = n.next) {
                n.seq = ++seq;
                if (n == last) {
                    break;
                }
            }
        } while (!TAIL.weakCompareAndSet(this, t, last));
        NEXT.setRelease(t, first);
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
        if (max == 0 || isEmpty()) {
            return 0;
        }
        int n = 0;
        for (Runnable task; n < max && (task = takeRescued()) != null; ) {
            into[n++] = task; // wake-ups that found no memory for a node: see the notes
        }
        if (n == max || HEAD.getAcquire(this) == TAIL.getAcquire(this)) {
            return n;
        }
        if (n > 0 && !popLock.tryLock()) {
            return n; // the rescued tasks taken are the batch: they must not wait on the lock's queue
        }
        if (n == 0) {
            popLock.lock();
        }
        try {
            Node h = (Node) HEAD.getAcquire(this);
            while (n < max) {
                Node next = awaitNext(h);
                if (next == null) {
                    break;
                }
                into[n++] = next.task;
                retire(h, next);
                h = next;
            }
            HEAD.setRelease(this, h); // once: size() never sees half a batch taken
            return n;
        } finally {
            popLock.unlock();
        }
    }

    /**
     * The node after {@code h}, waiting for a pusher's pending link if {@code h} is not the tail;
     * null if it is (the queue is empty after {@code h}). Called under popLock.
     */
    private Node awaitNext(Node h) {
        Node next = (Node) NEXT.getAcquire(h);
        for (int spins = 0; next == null; spins++) {
            if (TAIL.getAcquire(this) == h) {
                return null;
            }
            if (spins < SPINS_BEFORE_YIELD) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
            next = (Node) NEXT.getAcquire(h);
        }
        return next;
    }

    /**
     * Removes the oldest task. Thread-safe.
     *
     * @return the task, or null if the injector was empty
     */
    Runnable pop() {
        Runnable rescued = takeRescued();
        if (rescued != null) {
            return rescued;
        }
        if (HEAD.getAcquire(this) == TAIL.getAcquire(this)) {
            return null;
        }
        popLock.lock();
        try {
            Node h = (Node) HEAD.getAcquire(this);
            Node next = awaitNext(h);
            if (next == null) {
                return null;
            }
            Runnable task = next.task;
            retire(h, next);
            HEAD.setRelease(this, next);
            return task;
        } finally {
            popLock.unlock();
        }
    }

    /**
     * Retires {@code h} once the task of {@code next}, the next dummy, was taken; the caller then
     * moves head. Called under popLock.
     */
    private static void retire(Node h, Node next) {
        next.task = null;
        NEXT.setOpaque(h, h); // see GC in the notes
    }

    /**
     * The number of queued tasks, read without a lock: a hint for sizing batches. Exact when no
     * pop or rescue is in progress; while a {@link #popBatch} is in progress it may still count
     * the tasks that batch has taken (the batch is published when the call ends), a rescue slot
     * being filled counts before it holds its task, and pushes and pops may change it at once.
     * Thread-safe.
     *
     * @return the number of queued tasks, at least 0
     */
    int size() {
        Node h = (Node) HEAD.getAcquire(this);
        Node t = (Node) TAIL.getAcquire(this);
        return Math.max(t.seq - h.seq, 0) + (int) RESCUED.getVolatile(this);
    }

    /**
     * Whether no task is queued, read without a lock. Thread-safe; a snapshot, like
     * {@link #size()}: the node list, then the rescue slots' count (see the notes).
     *
     * @return true if the injector held no task when each was read
     */
    boolean isEmpty() {
        return HEAD.getAcquire(this) == TAIL.getAcquire(this) && (int) RESCUED.getVolatile(this) == 0;
    }
}
