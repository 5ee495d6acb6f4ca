package io.weft.fiber.time;

/**
 * The real {@link Clock}: whole milliseconds of {@link System#nanoTime()} since creation.
 * Immutable and thread-safe.
 */
final class RealClock implements Clock {
    /*
     * Implementation notes.
     *
     * One final field, written by the constructor and read by every caller: no synchronization.
     * System.nanoTime is monotonic within a JVM, so (nanoTime - origin) / 1e6 never decreases; the
     * subtraction is overflow-safe (nanoTime differences are valid for ~292 years).
     * Integer division truncates, so nowMs() is 0 for the first millisecond, and a deadline of
     * nowMs() + d can be reached less than d ms after it was read (read at 4.9 ms, a deadline of 5
     * comes 0.1 ms later). A timer is due only once the reading has passed its deadline (dueMs is
     * nowMs() - 1), so a timer armed at nowMs() + d fires no earlier than d ms later (at most one
     * millisecond more; before 2026-12-03 up to one millisecond early: Io.sleep of 1 ms could return
     * after 0.1).
     */

    private final long originNanos = System.nanoTime();

    @Override
    public long nowMs() {
        return (System.nanoTime() - originNanos) / 1_000_000L;
    }

    @Override
    public long dueMs() {
        return nowMs() - 1;
    }

    @Override
    public long nanosUntilDue(long deadlineMs) {
        // due once the reading passes the deadline: at (deadline + 1) ms, to the nanosecond
        if (deadlineMs >= Long.MAX_VALUE / 1_000_000L - 1) {
            return Long.MAX_VALUE;
        }
        return Math.max(0, (deadlineMs + 1) * 1_000_000L - (System.nanoTime() - originNanos));
    }

    @Override
    public boolean isVirtual() {
        return false;
    }

    @Override
    public String toString() {
        return "RealClock[" + nowMs() + " ms]";
    }
}
