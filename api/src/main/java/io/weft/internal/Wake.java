package io.weft.internal;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;

/** Unparks a thread that may belong to a runtime that has stopped. */
public final class Wake {
    private Wake() {}

    /**
     * Unparks {@code thread}. A virtual thread whose scheduler has stopped rejects the wake-up
     * (its runtime was closed and reported the thread's task as unfinished); the readier is not
     * the one to fail for that, so the rejection is ignored.
     *
     * @param thread the thread to unpark
     */
    public static void unpark(Thread thread) {
        try {
            LockSupport.unpark(thread);
        } catch (RejectedExecutionException stopped) {
            // the owner can never run again; its runtime's close() already reported it
        }
    }
}
