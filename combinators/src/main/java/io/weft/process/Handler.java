package io.weft.process;

/**
 * What a process does with each message: called once per message, in the order the mailbox
 * received them, never for two messages of one process at once. It runs in a task of the
 * installed Io, so it may suspend (sleep, await, {@linkplain Processes#ask ask} another process);
 * the process takes its next message when it returns. Throwing fails the process: the registry
 * reports the failure and, if the process's restart policy allows, builds a fresh handler from the
 * process's factory (its state starts over; its mailbox and pid stay).
 *
 * @param <M> the type of the messages the process receives
 */
@FunctionalInterface
public interface Handler<M> {

    /**
     * Handles one message.
     *
     * @param self the process's own view: its pid, registry and restart count
     * @param message the message, never null
     * @throws Exception to fail the process
     */
    void handle(ProcessContext<M> self, M message) throws Exception;
}
