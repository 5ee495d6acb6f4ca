package io.weft.process;

/**
 * The kind of mailbox a process gets: {@linkplain #unbounded() unbounded} (a send never waits) or
 * {@linkplain #bounded(int) bounded} (a send suspends while the mailbox is full, which slows a
 * fast sender down to the pace of the process). Immutable.
 */
public final class Mailbox {
    private final int capacity;

    private Mailbox(int capacity) {
        this.capacity = capacity;
    }

    /**
     * A mailbox without a limit: a lock-free multi-producer single-consumer queue; a send is one
     * CAS and never waits.
     *
     * @return the unbounded kind
     */
    public static Mailbox unbounded() {
        return new Mailbox(0);
    }

    /**
     * A mailbox that holds at most {@code capacity} messages: a {@code send} to a full one
     * suspends the sender, a {@code trySend} returns false. Its ring is allocated up front when
     * the process is spawned, 12 bytes a slot ({@link io.weft.channel.Channel#bounded}).
     *
     * @param capacity how many messages it holds, at least 1
     * @return the bounded kind
     * @throws IllegalArgumentException if {@code capacity} is less than 1
     */
    public static Mailbox bounded(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("a bounded mailbox holds at least 1 message, was " + capacity);
        }
        return new Mailbox(capacity);
    }

    /** Builds the queue of one process. */
    <M> MessageQueue<M> newQueue() {
        return capacity == 0 ? new UnboundedQueue<>() : new BoundedQueue<>(capacity);
    }

    @Override
    public String toString() {
        return capacity == 0 ? "Mailbox[unbounded]" : "Mailbox[bounded " + capacity + "]";
    }
}
