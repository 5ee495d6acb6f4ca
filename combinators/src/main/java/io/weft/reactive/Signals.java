package io.weft.reactive;

/** What Weft's publishers do when a subscriber breaks the rules while being called. */
final class Signals {
    private Signals() {}

    /**
     * Calls {@code onSubscribe}; if it throws, reports the exception to the current thread's
     * uncaught-exception handler and returns false. §1.9 wants {@code subscribe} to return
     * normally, and §2.13 says such a subscriber is to be treated as having cancelled.
     */
    static boolean onSubscribe(Sink<?> subscriber, Sink.BothSubscription subscription) {
        try {
            subscriber.onSubscribe(subscription);
            return true;
        } catch (RuntimeException | Error e) {
            Thread current = Thread.currentThread();
            current.getUncaughtExceptionHandler().uncaughtException(current, e);
            return false;
        }
    }
}
