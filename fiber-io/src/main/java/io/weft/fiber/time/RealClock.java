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
     * Integer division truncates, so nowMs() is 0 for the first millisecond and a timer armed at
     * nowMs() + d fires no earlier than d ms later.
     */

    private final long originNanos = System.nanoTime();

    @Override
    public long nowMs() {
        return (System.nanoTime() - originNanos) / 1_000_000L;
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
