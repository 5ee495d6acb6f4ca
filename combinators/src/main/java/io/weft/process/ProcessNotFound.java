package io.weft.process;

import java.io.Serial;

/**
 * Thrown by {@link Processes#send} and {@link Processes#ask} when the pid names no live process:
 * it never existed in this registry, or it has ended. The message was not delivered and is still
 * the caller's.
 */
public final class ProcessNotFound extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was not found, and why
     */
    public ProcessNotFound(String message) {
        super(message);
    }
}
