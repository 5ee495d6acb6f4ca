package io.weft.fiber.time;

/**
 * A FiberIo's clock in milliseconds: real ({@link #real()}) or virtual ({@link #virtual()}).
 * Implementations are thread-safe.
 *
 * <p>Both start at 0 when created and never go back. The real clock follows
 * {@link System#nanoTime()}; the virtual clock moves only when its owner calls
 * {@link VirtualClock#advanceTo}, which FiberIo does when no fiber is runnable (it jumps to the
 * earliest timer deadline).
 *
 * {@snippet :
 * Clock clock = virtual ? Clock.virtual() : Clock.real();
 * long deadline = clock.nowMs() + 250;
 * if (clock instanceof VirtualClock v && nothingRunnable) {
 *     v.advanceTo(timers.nextDeadline());   // only when nextDeadline() != Io.NO_DEADLINE
 * }
 * }
 */
public sealed interface Clock permits RealClock, VirtualClock {
    /*
     * Implementation notes.
     *
     * Sealed so that the scheduler can switch exhaustively on the two kinds and so that "virtual"
     * has exactly one meaning (VirtualClock). Time is injected through this interface: nothing
     * under io.weft.fiber reads System.nanoTime for logic, only RealClock does. Both clocks are
     * immutable apart from VirtualClock's one atomic long; see each class for its fields.
     */

    /**
     * Returns a real clock: milliseconds of {@link System#nanoTime()} elapsed since this call.
     * Starts at 0; monotonic.
     *
     * @return a new real clock
     */
    static Clock real() {
        return new RealClock();
    }

    /**
     * Returns a virtual clock at 0 that moves only by {@link VirtualClock#advanceTo}.
     *
     * @return a new virtual clock
     */
    static VirtualClock virtual() {
        return new VirtualClock();
    }

    /**
     * Returns the time in milliseconds since this clock was created; never less than an earlier
     * result. Thread-safe.
     *
     * @return the current time on this clock, at least 0
     */
    long nowMs();

    /**
     * Returns the latest timer deadline that is due now: {@link #nowMs()} on a virtual clock; one
     * less on a real one, whose reading is truncated to a whole millisecond. A deadline armed at
     * {@code nowMs() + d} read at 4.9 ms is 4 + d, reached 0.1 ms later for d = 1; it is due when
     * the reading passes it, which is more than d ms after the arming. Timers fire by this, never
     * by nowMs().
     *
     * @return the latest due deadline
     */
    long dueMs();

    /**
     * Returns how long until a timer at {@code deadlineMs} is due ({@link #dueMs()} reaches it),
     * in nanoseconds of real time, at least 0: how long a worker may park for it. On a virtual
     * clock, which moves only when told to, the milliseconds to it as if it were real.
     *
     * @param deadlineMs a deadline on this clock, not {@link io.weft.Io#NO_DEADLINE}
     * @return the nanoseconds until it is due, saturating
     */
    long nanosUntilDue(long deadlineMs);

    /**
     * Returns whether this clock is virtual (moves only when told to).
     *
     * @return {@code true} for a {@link VirtualClock}
     */
    boolean isVirtual();
}
