package io.weft.process;

import java.util.Objects;

/**
 * A message that was delivered to a mailbox but never handled: its process ended (returned,
 * failed for good, or was shut down) with the message still queued, or its handler failed on it
 * (the process may then be restarted, without it). A registry hands each one to its dead-letter
 * handler; none is dropped silently.
 *
 * @param to the process the message was sent to
 * @param message the message
 * @param reason why it was not handled: how the process ended, or that its handler failed on it
 */
public record DeadLetter(Pid<?> to, Object message, String reason) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException if a component is null
     */
    public DeadLetter {
        Objects.requireNonNull(to, "to");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(reason, "reason");
    }
}
