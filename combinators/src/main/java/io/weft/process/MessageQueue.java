package io.weft.process;

import java.util.List;

/**
 * One process's mailbox: many senders, one consumer at a time (the process's current run, or,
 * once it has ended, the registry draining what is left). Closing refuses later messages.
 */
interface MessageQueue<M> {

    /** Adds {@code message}, suspending while a bounded queue is full; false if the queue is closed. */
    boolean put(M message);

    /** Adds {@code message} if there is room now: {@code 1} added, {@code 0} full, {@code -1} closed. */
    int tryPut(M message);

    /**
     * Takes the oldest message, or null if there is none. Consumer only. A message whose put has
     * returned is never missed: a put that has not finished publishing is waited for.
     */
    M poll();

    /** Refuses every later put; what is queued stays takeable. Idempotent. */
    void close();

    /** After {@link #close()}: takes every message left, oldest first. Consumer only. */
    List<M> drain();
}
