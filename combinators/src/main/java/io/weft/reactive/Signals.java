package io.weft.reactive;

import io.weft.Io;

/** What Weft's publishers do when a subscriber breaks the rules while being called. */
final class Signals {
    private Signals() {}

    /**
     * Calls {@code onSubscribe}; if it throws, reports the exception and returns false. §1.9 wants
     * {@code subscribe} to return normally, and §2.13 says such a subscriber is to be treated as
     * having cancelled.
     */
    static boolean onSubscribe(Io io, Sink<?> subscriber, Sink.BothSubscription subscription) {
        try {
            subscriber.onSubscribe(subscription);
            return true;
        } catch (RuntimeException | Error e) {
            report(io, e);
            return false;
        }
    }

    /**
     * Reports an exception a subscriber threw from a signal (§2.13: it broke the rules; the
     * publisher treats the subscription as cancelled and must not throw it at whoever was calling,
     * §1.9, §3.16): to {@code io}'s uncaught-exception handler if it has one, else to the calling
     * thread's. Never dropped; an exception the handler throws is ignored, as the JVM does.
     *
     * @param io the publisher's Io, or null
     * @param e what the subscriber threw
     */
    static void report(Io io, Throwable e) {
        Thread self = Thread.currentThread();
        Thread.UncaughtExceptionHandler handler = io != null ? io.uncaughtExceptionHandler() : null;
        try {
            (handler != null ? handler : self.getUncaughtExceptionHandler()).uncaughtException(self, e);
        } catch (RuntimeException | Error ignored) {
            // as for a thread's handler: a handler that throws is ignored
        }
    }
}
