package io.weft.channel;

import io.weft.Cancelled;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.TimedOut;
import io.weft.TimerHandle;
import io.weft.combinators.internal.Deadlines;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A bounded multi-producer multi-consumer queue between tasks: {@link #send} suspends while the
 * channel is full, {@link #receive} while it is empty. Thread-safe; works the same under every
 * {@link Io} (it parks through the {@linkplain Io#current() installed} Io's
 * {@link Io#suspendRaw}), and from plain threads.
 *
 * <p>Items are delivered in FIFO order of their sends (per producer, and across producers in the
 * order their sends took effect); every sent item is received exactly once. Items are never null.
 *
 * <p><b>Closing.</b> {@link #close()} stops further sends; items already buffered still drain,
 * then {@link #receive} throws {@link ChannelClosed}. Iteration is the usual way to consume until
 * the end:
 *
 * {@snippet :
 * Channel<String> lines = Channel.bounded(16);
 * Future<Void> producer = Io.async(() -> {
 *     try {
 *         for (String line : source) {
 *             lines.send(line);        // suspends while 16 lines are waiting
 *         }
 *     } finally {
 *         lines.close();               // the consumer's loop ends after the last line
 *     }
 *     return null;
 * });
 * for (String line : lines) {          // receives until closed and drained
 *     handle(line);
 * }
 * }
 *
 * <p><b>Cancellation.</b> {@code send} and {@code receive} are suspend points only when they have
 * to wait; an operation that completes at once (there was room, there was an item) completes even
 * in a cancelled task. A wait that is cancelled throws {@link Cancelled} and:
 * <ul>
 *   <li>a cancelled {@code receive} has consumed nothing: the item, if any arrived, stays in the
 *       channel for another receiver (its wake-up is passed on to the next waiting receiver);
 *   <li>a cancelled {@code send} has not enqueued its item: the channel calls the
 *       {@linkplain #bounded(int, Consumer) undelivered-item hook} with it, then throws.
 * </ul>
 * These guarantees hold at the call. An item returned by {@code receive} inside a task that is
 * cancelled before the task returns it (for example {@code Futures.timeout(d, ch::receive)} when
 * the item and the deadline arrive together) is dropped with the task's value: a task's value
 * after {@code cancel()} is dropped. For a receive with a deadline use {@link #receive(Duration)},
 * which waits in the calling task and so cannot lose the item; to wait for the first of several
 * channels (or a channel and a future), use {@link Select}, whose losing clauses take nothing;
 * otherwise record the hand-off before returning, or receive in the task that uses the item.
 * Rendezvous (capacity 0) is not offered, see {@link #bounded(int)}.
 *
 * @param <T> the type of the items
 */
public final class Channel<T> implements Iterable<T> {
    /*
     * Implementation notes.
     *
     * Data path: Ring, a lock-free bounded MPMC ring of exactly `capacity` slots (Vyukov's per-slot
     * sequence numbers, slot = position % capacity, sequence doubled so that capacity 1 is
     * exact, a closed mark in tail's low bit). trySend/tryReceive and the first attempt of
     * send/receive are one ring operation plus one volatile flag read: no lock.
     *
     * Blocking path: two Waiters lists, `receivers` (waiting for an item) and `senders` (waiting
     * for space), each a FIFO list of (Io, ParkToken) nodes under its own lock, with a volatile
     * flag `waiting` (the hasRecvWaiters / hasSendWaiters of DESIGN §5). A successful ring write
     * is followed by wakeOne() on the other side's list, which reads the flag and, if set, pops the
     * oldest node under the lock and readies its token outside it.
     *
     * The Dekker flags: fast path = ring write (volatile slot sequence store), then flag read
     * (volatile); waiter = flag write (volatile, under the lock), then re-check of the ring
     * (volatile reads) under the same lock, then link and park. Both sides are seq_cst, so at least
     * one sees the other: either the re-check succeeds, or the fast path sees the flag and pops
     * the node (which, the re-check and link being one critical section, is already linked). An
     * acquire/release version is broken even on x86 (StoreLoad reordering); the jcstress tests
     * ChannelWakeupFlagsTest (passes) and ChannelWakeupFlagsMutantTest (a setRelease/getAcquire
     * copy that shows the lost wake-up) in the stress module prove both halves.
     *
     * Who writes / reads: Ring.head by consumers (CAS), Ring.tail by producers and close (CAS),
     * slot sequences and items by the claimant of the slot, read by all; a Waiters list and flag
     * are written under its lock, the flag is read by anyone. Woken waiters are not handed an
     * item: a wake-up is a permission to retry the ring (the wake-and-retry design). Each ring
     * write wakes one waiter; a waiter that finds nothing after its wake-up (a fast-path caller
     * got there first, or the head slot is claimed but not yet published) links a new node and
     * parks again. Its wake-up is not lost: every successful take (put) that still sees items or
     * claims (room) while receivers (senders) wait, or sees the channel closed, wakes the next
     * one (afterTake/afterPut), so a wake-up used up on an unpublished slot is passed on by the
     * operation that follows its publish.
     *
     * Cancellation safety: items leave the ring only through poll(), whose caller returns the item
     * at once (no suspend point in between), so a cancelled receive never consumes anything. A
     * cancelled waiter removes its node; if its node had already been popped, the wake-up it got
     * was for an item/slot it will not use, so it passes the wake-up on (wakeOne on its list).
     * A cancelled send never wrote its item (the ring write is its last step before returning), so
     * it reports it to onUndelivered.
     *
     * Timed receive: the same wait with a timer armed on the waiter's own token. A timer wake-up
     * leaves the node linked, so the receiver removes it (Waiters.leave) before it looks again:
     * a stale node would otherwise absorb a later wakeOne meant for a live waiter. If leave finds
     * the node already popped, a waker chose this receiver; should it then time out with nothing,
     * it passes that wake-up on, exactly as a cancelled waiter does.
     *
     * Closing: Ring.close() sets tail's mark with a CAS, so a send either claimed its slot before
     * the close (and its item is drained) or sees the mark; then both lists are woken. Receivers
     * find "closed and drained" (head caught up with tail) or park again if a producer that claimed
     * before the close has not published yet: its publish wakes one receiver, whose take sees the
     * close and wakes the next, and the receiver that finds the channel drained wakes them all.
     *
     * Alternatives: handing items directly to parked receivers (kotlinx.coroutines, Go) saves a
     * retry but makes cancellation a race between the hand-off and the cancel that must be undone
     * (re-queue at the front, or "receive returns the item instead of throwing"); wake-and-retry
     * has nothing to undo. Crossbeam keeps the slot publish release-only and makes its re-check spin
     * while a claimed slot is unpublished; we pay one fence per publish instead, which keeps the
     * re-check wait-free and the proof a plain Dekker. Only the answers handed to the caller wait
     * for such a slot: trySend's false, tryReceive's null and a deadline's TimedOut come from the
     * ring's settled forms, so they are linearizable (ChannelLincheckTest checks them against a
     * sequential queue); the waiting paths park instead. Padding of head/tail against false sharing
     * is left to a benchmark that shows it pays (STYLE.md).
     */

    private final Ring<T> ring;
    private final Waiters receivers = new Waiters();
    private final Waiters senders = new Waiters();
    private final Consumer<? super T> onUndelivered;

    private Channel(int capacity, Consumer<? super T> onUndelivered) {
        this(capacity, onUndelivered, null);
    }

    /** For tests: {@code afterClaim} runs inside a send between its slot claim and its publish. */
    Channel(int capacity, Consumer<? super T> onUndelivered, java.util.function.LongConsumer afterClaim) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.ring = new Ring<>(capacity, afterClaim);
        this.onUndelivered = onUndelivered;
    }

    /**
     * Creates a channel that buffers up to {@code capacity} items.
     *
     * <p>There is no rendezvous form ({@code capacity == 0}, a send completes only when a receiver
     * takes the item): with a ring as the data path it would need a hand-off protocol where a
     * send's cancellation races the receiver's take, which this channel's wake-and-retry design
     * avoids on purpose. {@code bounded(1)} is the nearest: a send completes when the item is
     * buffered, not when it is received.
     *
     * @param capacity how many items the channel holds, exactly (not rounded up); its ring is
     *     allocated up front, 12 bytes a slot
     * @param <T> the type of the items
     * @return a new, open, empty channel
     * @throws IllegalArgumentException if {@code capacity} is less than 1, or more than
     *     {@code Integer.MAX_VALUE - 8} (no array that long)
     */
    public static <T> Channel<T> bounded(int capacity) {
        return new Channel<>(capacity, null);
    }

    /**
     * Creates a channel that buffers up to {@code capacity} items and reports every item it
     * refuses to {@code onUndelivered}, so that resources held by items are not leaked.
     *
     * <p>The hook is called, on the sender's thread, exactly for: the item of a {@link #send}
     * whose wait was cancelled (it was not enqueued), and the item of a {@link #send} or
     * {@link #trySend} that fails because the channel is closed. It is <em>not</em> called for
     * items still buffered when the channel is closed (they remain receivable), nor for a
     * {@code trySend} that returns {@code false} because the channel is full (the caller still
     * holds the item). An exception thrown by the hook is added as suppressed to the
     * {@link Cancelled} or {@link ChannelClosed} that the send then throws.
     *
     * @param capacity how many items the channel holds, exactly; allocated up front, as for
     *     {@link #bounded(int)}
     * @param onUndelivered called with each item the channel refuses, as described
     * @param <T> the type of the items
     * @return a new, open, empty channel
     * @throws IllegalArgumentException if {@code capacity} is less than 1, or more than
     *     {@code Integer.MAX_VALUE - 8}
     * @throws NullPointerException if {@code onUndelivered} is null
     */
    public static <T> Channel<T> bounded(int capacity, Consumer<? super T> onUndelivered) {
        return new Channel<>(capacity, Objects.requireNonNull(onUndelivered, "onUndelivered"));
    }

    /**
     * Returns how many items this channel holds at most.
     *
     * @return the capacity given to {@link #bounded(int)}
     */
    public int capacity() {
        return ring.capacity();
    }

    /**
     * Sends {@code item}, suspending the current task (or blocking the current thread) while the
     * channel is full.
     *
     * <p>Cancellation: a suspend point only when the channel is full. If the wait is cancelled, the
     * item was not enqueued: it is passed to the undelivered-item hook (if any) and
     * {@link Cancelled} is thrown. If it returns, the item is in the channel.
     *
     * @param item the item, not null
     * @throws ChannelClosed if the channel is closed, before or while waiting (the item goes to
     *     the undelivered-item hook)
     * @throws Cancelled if the current task is cancelled while waiting for room
     * @throws NullPointerException if {@code item} is null
     */
    public void send(T item) {
        Objects.requireNonNull(item, "item");
        while (true) {
            Ring.Offer offer = ring.offer(item);
            if (offer == Ring.Offer.FULL) {
                Io io = Io.current();
                Waiters.Node node = new Waiters.Node(io, ParkToken.create(this));
                offer = senders.linkUnless(node, () -> {
                    Ring.Offer again = ring.offer(item);
                    return again == Ring.Offer.FULL ? null : again;
                });
                if (offer == null) {
                    try {
                        park(senders, node);
                    } catch (Cancelled cancelled) {
                        throw undelivered(item, cancelled);
                    }
                    continue; // woken: room (or a close) to look at
                }
            }
            if (offer == Ring.Offer.ADDED) {
                afterPut();
                return;
            }
            throw undelivered(item, new ChannelClosed("send on a closed channel"));
        }
    }

    /**
     * Sends {@code item} if there is room right now; never suspends. Linearizable: {@code false}
     * means the channel was full at one instant during the call (if another thread is between
     * taking an item and freeing its slot, this call waits those few instructions).
     *
     * @param item the item, not null
     * @return {@code true} if the item is in the channel, {@code false} if the channel was full
     *     (the item is still the caller's)
     * @throws ChannelClosed if the channel is closed (the item goes to the undelivered-item hook)
     * @throws NullPointerException if {@code item} is null
     */
    public boolean trySend(T item) {
        Objects.requireNonNull(item, "item");
        return switch (ring.offerSettled(item)) {
            case ADDED -> {
                afterPut();
                yield true;
            }
            case FULL -> false;
            case CLOSED -> throw undelivered(item, new ChannelClosed("trySend on a closed channel"));
        };
    }

    /**
     * Receives the oldest item, suspending the current task (or blocking the current thread) while
     * the channel is empty.
     *
     * <p>Cancellation: a suspend point only when the channel is empty. A cancelled wait throws
     * {@link Cancelled} having consumed nothing; an item that arrived meanwhile stays in the
     * channel for another receiver.
     *
     * @return the item, never null
     * @throws ChannelClosed if the channel is closed and every buffered item has been received
     * @throws Cancelled if the current task is cancelled while waiting for an item
     */
    public T receive() {
        T item = ring.poll();
        if (item != null) {
            afterTake();
            return item;
        }
        return awaitItem(Io.current(), Io.NO_DEADLINE, null);
    }

    /**
     * Receives the oldest item, suspending the current task (or blocking the current thread) at
     * most {@code timeout} on the installed Io's clock while the channel is empty.
     *
     * <p>Unlike running {@link #receive()} under {@code Futures.timeout}, nothing can be lost at
     * the deadline: the wait and the deadline are one suspension in the calling task, so an item
     * is either returned or left in the channel. A timed-out receive has consumed nothing and
     * leaves no trace in the channel (a wake-up it was given is passed on).
     *
     * @param timeout how long to wait at most, rounded up to whole milliseconds; zero or negative
     *     means do not wait (return an item that is there, else time out at once)
     * @return the item, never null
     * @throws TimedOut if no item arrived within {@code timeout}
     * @throws ChannelClosed if the channel is closed and every buffered item has been received
     * @throws Cancelled if the current task is cancelled while waiting
     * @throws NullPointerException if {@code timeout} is null
     */
    public T receive(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        T item = ring.poll();
        if (item != null) {
            afterTake();
            return item;
        }
        Io io = Io.current();
        return awaitItem(io, Deadlines.after(io.nowMs(), timeout), timeout);
    }

    /** The slow path of both receives: park until an item, the end, or the deadline. */
    private T awaitItem(Io io, long deadlineMs, Duration timeout) {
        boolean holdsWakeUp = false; // popped by a waker, then found nothing: the wake-up is ours
        // The deadline has passed when its timer fired, by the Io's own rule (a real clock's
        // reading must pass it: Io.armTimer), when the reading has passed it, or at once for a
        // timeout of zero or less. Never when the reading has only reached it: a truncated
        // reading reaches the deadline up to a millisecond before the wait has lasted its timeout.
        boolean due = timeout != null && !timeout.isPositive();
        while (true) {
            T item = ring.poll();
            if (item != null) {
                afterTake();
                return item;
            }
            if (ring.isClosedAndDrained()) {
                throw drainedFor(receivers);
            }
            if (due) {
                T late = ring.pollSettled(); // "nothing arrived" must hold at one instant
                if (late != null) {
                    afterTake();
                    return late;
                }
                if (holdsWakeUp) {
                    receivers.wakeOne(); // we will not use it: someone else may
                }
                throw new TimedOut("no item arrived within " + timeout);
            }
            Waiters.Node node = new Waiters.Node(io, ParkToken.create(this));
            Object ready = receivers.linkUnless(node, this::pollOrEnd);
            if (ready == End.CLOSED) {
                throw drainedFor(receivers);
            }
            if (ready != null) {
                afterTake();
                @SuppressWarnings("unchecked") // only items of type T are ever in the ring
                T received = (T) ready;
                return received;
            }
            if (deadlineMs == Io.NO_DEADLINE) {
                park(receivers, node);
                continue; // woken: an item (or a close) to look at
            }
            TimerHandle timer = armOrLeave(io, deadlineMs, receivers, node);
            try {
                park(receivers, node);
            } finally {
                // it fired; or the reading has passed the deadline (never early), should a run of
                // wake-ups for items others take keep re-arming a timer that is due
                due = !timer.cancel() || io.nowMs() > deadlineMs;
            }
            // Woken by a waker (the node was popped: a wake-up for us) or by the timer (the node
            // is still linked: take it out, or a later wakeOne would spend a wake-up on it).
            holdsWakeUp = receivers.leave(node);
        }
    }

    /**
     * Receives the oldest item if one is available right now; never suspends. Linearizable: a
     * {@code null} means the channel was empty at one instant during the call (if another thread is
     * between claiming a slot and writing its item, this call waits those few instructions).
     *
     * @return the item, or {@code null} if the channel is empty (or closed and drained; see
     *     {@link #isClosed()})
     */
    public T tryReceive() {
        T item = ring.pollSettled();
        if (item != null) {
            afterTake();
        }
        return item;
    }

    /**
     * Closes this channel: later sends throw {@link ChannelClosed}; items already buffered can
     * still be received, after which receives throw {@code ChannelClosed}. Senders and receivers
     * waiting right now are woken (a waiting sender's item goes to the undelivered-item hook).
     * Idempotent; never suspends, so it is safe in {@code finally} blocks of cancelled tasks.
     */
    public void close() {
        if (ring.close()) {
            receivers.wakeAll();
            senders.wakeAll();
        }
    }

    /**
     * Returns whether {@link #close()} has been called. A closed channel may still hold items.
     *
     * @return {@code true} once closed
     */
    public boolean isClosed() {
        return ring.isClosed();
    }

    /**
     * Returns an iterator that {@linkplain #receive() receives} items until the channel is closed
     * and drained. {@code hasNext()} may suspend (and is where cancellation takes effect, with
     * {@code receive}'s guarantee: a cancelled {@code hasNext} consumed nothing); an item it
     * received is kept for the next {@code next()}. Each iterator is for one task; several
     * iterators on the same channel share the items (each item goes to one of them).
     *
     * @return a consuming iterator
     */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private T next;
            private boolean ended;

            @Override
            public boolean hasNext() {
                if (next != null) {
                    return true;
                }
                if (ended) {
                    return false;
                }
                try {
                    next = receive();
                    return true;
                } catch (ChannelClosed closed) {
                    ended = true;
                    return false;
                }
            }

            @Override
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("the channel is closed and drained");
                }
                T item = next;
                next = null;
                return item;
            }
        };
    }

    // ------------------------------------------------------------ the halves a Select uses

    /**
     * A receive clause's attempt that does not wait: the item, {@link End#CLOSED} if the
     * channel is closed and drained (every other parked receiver is woken to see it), else null.
     */
    Object selectReceiveNow() {
        return takenOrEnd(ring.poll());
    }

    /** As {@link #selectReceiveNow}, but null only if the channel was empty at one instant (Ring.pollSettled). */
    Object selectReceiveSettled() {
        return takenOrEnd(ring.pollSettled());
    }

    /** A receive clause's result for what a poll returned: the item (after its wake-up chain), else the end or null. */
    private Object takenOrEnd(T item) {
        if (item != null) {
            afterTake();
            return item;
        }
        return closedForReceivers();
    }

    /**
     * Links {@code node} among the parked receivers unless an item (or the end) is there: returns
     * what {@link #selectReceiveNow} would, or null when the node is linked.
     */
    Object selectReceiveLink(Waiters.Node node) {
        Object ready = receivers.linkUnless(node, this::pollOrEnd);
        if (ready == End.CLOSED) {
            receivers.wakeAll();
        } else if (ready != null) {
            afterTake();
        }
        return ready;
    }

    /**
     * A send clause's attempt that does not wait: {@link End#SENT} (the item is in),
     * {@link End#CLOSED}, or null if the channel is full.
     */
    Object selectSendNow(T item) {
        return sent(ring.offer(item));
    }

    /** As {@link #selectSendNow}, but null only if the channel was full at one instant (Ring.offerSettled). */
    Object selectSendSettled(T item) {
        return sent(ring.offerSettled(item));
    }

    /**
     * Links {@code node} among the parked senders unless there is room (or the channel is closed):
     * returns what {@link #selectSendNow} would, or null when the node is linked.
     */
    Object selectSendLink(Waiters.Node node, T item) {
        return sent(senders.linkUnless(node, () -> {
            Ring.Offer again = ring.offer(item);
            return again == Ring.Offer.FULL ? null : again;
        }));
    }

    /** A send clause that met a closed channel: the item goes to the undelivered-item hook. */
    ChannelClosed selectSendClosed(T item) {
        return (ChannelClosed) undelivered(item, new ChannelClosed("send on a closed channel (in a select)"));
    }

    /** The receive clause's end of the stream, as {@link Channel#receive} reports it. */
    static ChannelClosed selectDrained() {
        return new ChannelClosed("receive on a closed and drained channel (in a select)");
    }

    Waiters receivers() {
        return receivers;
    }

    Waiters senders() {
        return senders;
    }

    private Object sent(Ring.Offer offer) {
        if (offer == null || offer == Ring.Offer.FULL) {
            return null;
        }
        if (offer == Ring.Offer.ADDED) {
            afterPut();
            return End.SENT;
        }
        return End.CLOSED;
    }

    /** A waiting receiver's re-check: an item, {@link End#CLOSED} if closed and drained, or null. */
    private Object pollOrEnd() {
        T again = ring.poll();
        if (again != null) {
            return again;
        }
        return ring.isClosedAndDrained() ? End.CLOSED : null;
    }

    private Object closedForReceivers() {
        if (ring.isClosedAndDrained()) {
            receivers.wakeAll();
            return End.CLOSED;
        }
        return null;
    }

    /** What a receive's re-check or a select clause found, when it is not an item. */
    enum End {
        /** The send clause's item is in the channel. */
        SENT,
        /** The channel is closed (for a receive: closed and drained). */
        CLOSED
    }

    /** How many receivers are parked right now (for tests and diagnostics). */
    int waitingReceivers() {
        return receivers.size();
    }

    /** How many senders are parked right now (for tests and diagnostics). */
    int waitingSenders() {
        return senders.size();
    }

    @Override
    public String toString() {
        return "Channel[capacity=" + ring.capacity() + (isClosed() ? ", closed]" : "]");
    }

    /**
     * Arms the timer of a linked node's timed wait; if that throws (no memory for the timer, an
     * Io that refuses), takes the node out first, passing on a wake-up it was given: a stale
     * node would take a later wake-up meant for a live waiter.
     */
    private static TimerHandle armOrLeave(Io io, long deadlineMs, Waiters list, Waiters.Node node) {
        try {
            return io.armTimer(deadlineMs, node.token);
        } catch (RuntimeException | Error e) {
            if (list.leave(node)) {
                list.wakeOne();
            }
            throw e;
        }
    }

    /** Parks on {@code node}; on any exception, leaves the list and passes on a wake-up it got. */
    private static void park(Waiters list, Waiters.Node node) {
        try {
            node.io.suspendRaw(node.token);
        } catch (RuntimeException | Error e) {
            if (list.leave(node)) {
                list.wakeOne();
            }
            throw e;
        }
    }

    private RuntimeException undelivered(T item, RuntimeException reason) {
        if (onUndelivered != null) {
            try {
                onUndelivered.accept(item);
            } catch (RuntimeException | Error hookFailure) {
                reason.addSuppressed(hookFailure);
            }
        }
        return reason;
    }

    /**
     * After an item went in: wake a receiver; and if more senders wait while there is still room
     * (or the channel closed), wake the next sender too. The chain matters when a woken waiter
     * found a slot claimed but not yet published and went back to sleep: the wake-up it used is
     * passed on by the next successful operation instead of being lost.
     */
    private void afterPut() {
        receivers.wakeOne();
        if (senders.hasWaiters() && (ring.hasRoom() || ring.isClosed())) {
            senders.wakeOne();
        }
    }

    /** After an item came out: wake a sender; chain to the next receiver as {@link #afterPut} does. */
    private void afterTake() {
        senders.wakeOne();
        if (receivers.hasWaiters() && (ring.hasPending() || ring.isClosed())) {
            receivers.wakeOne();
        }
    }

    /** The end of the stream: every other parked receiver must see it too. */
    private static ChannelClosed drainedFor(Waiters receivers) {
        receivers.wakeAll();
        return new ChannelClosed("receive on a closed and drained channel");
    }
}
