package io.weft.internal;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.LockSupport;

/** Unparks a thread that may belong to a runtime that has stopped. */
public final class Wake {
    private Wake() {}

    /**
     * Unparks {@code thread}. A virtual thread whose scheduler has stopped may reject the
     * wake-up (FiberIo's does not: it hands such a fiber to the JDK's default scheduler, but a
     * runtime's scheduler may); the readier is not the one to fail for that, so a rejection is
     * ignored.
     *
     * @param thread the thread to unpark
     */
    public static void unpark(Thread thread) {
        try {
            LockSupport.unpark(thread);
        } catch (RejectedExecutionException stopped) {
            // the owner can never run again; its runtime's close() reports it
        }
    }
}
