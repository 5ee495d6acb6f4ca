package io.weft.reactive.tck;

import org.reactivestreams.tck.TestEnvironment;

/**
 * The timing every TCK class here shares, chosen for a loaded two-core machine: a signal that is
 * expected may take its time, and waiting for signals that must not come is kept short, because
 * the TCK waits that long every time (a short wait can only miss a late violation, never fail a
 * correct publisher).
 */
final class Tck {
    private Tck() {}

    /** How long to wait for a signal that must come. Only a failing test waits this long. */
    static final long SIGNAL_TIMEOUT_MS = 5_000;

    /** How long to watch for signals that must not come (each expectNone, each quiet check). */
    static final long NO_SIGNALS_MS = 100;

    /**
     * How long an expected onError may take. The TCK 1.0.4's {@code expectError} sleeps one poll
     * interval and then gives up (its remaining-time arithmetic is {@code =-}), so this is the
     * real deadline for an error, and every expected error costs this much time.
     */
    static final long ERROR_POLL_MS = 500;

    /** How long after cancel a publisher may still hold the subscriber (§3.13) before the GC check. */
    static final long SUBSCRIBER_RELEASE_MS = 300;

    static TestEnvironment environment() {
        return new TestEnvironment(SIGNAL_TIMEOUT_MS, NO_SIGNALS_MS, ERROR_POLL_MS);
    }
}
