package io.weft.internal;

import io.weft.Future;

/**
 * For tests only: looks inside the task behind a {@link Future} at what no user needs to see.
 * Weft's own suites and the conformance kit ({@code io.weft.protocol}) use it to check that a
 * waiter that gave up left nothing behind. Not API: this package is exported only to Weft's own
 * modules. Thread-safe; every answer is a snapshot.
 */
public final class TaskProbe {
    private TaskProbe() {}

    /**
     * Counts the live waiters registered on {@code future}: parked awaits, races, {@code onDone}
     * actions that have neither run nor been deregistered. Always 0 once the future is done (its
     * waiters ran when it completed).
     *
     * @param future a future made by Weft
     * @return how many waiters would run if it completed now
     * @throws IllegalArgumentException if {@code future} was not made by Weft
     */
    public static int waiterCount(Future<?> future) {
        return Task.of(future, "future").waiterCount();
    }
}
