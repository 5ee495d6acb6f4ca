package io.weft.fiber.time;

import io.weft.Io;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Clock} that starts at 0 and moves only forward, only when {@link #advanceTo} is called.
 * Thread-safe.
 *
 * <p>FiberIo advances it when no fiber is runnable, to the earliest timer deadline, so sleeps take
 * no real time and, with one worker, a program's interleaving is the same on every run.
 */
public final class VirtualClock implements Clock {
    /*
     * Implementation notes.
     *
     * State: one AtomicLong `now`. Written by advanceTo (any thread, in FiberIo the worker that
     * found nothing runnable), read by nowMs (every fiber and worker). advanceTo is a CAS loop
     * that only ever raises the value, so concurrent advances end at their maximum whatever the
     * interleaving, and no reader ever sees the clock go back. Volatile (seq_cst) access: a fiber
     * that reads the new time also sees everything the advancing thread wrote before advancing.
     *
     * The loop reads first and returns without writing when the target is not ahead, so the
     * common "already there" case (several workers racing to the same deadline) is a plain
     * volatile read, not a contended write. getAndAccumulate(max) would always write.
     *
     * advanceTo(Io.NO_DEADLINE) is rejected: "no timer pending" must never be mistaken for a
     * deadline, or the clock would jump to the end of time and every later deadline computed as
     * nowMs() + d would overflow.
     */

    private final AtomicLong now = new AtomicLong();

    VirtualClock() {}

    @Override
    public long nowMs() {
        return now.get();
    }

    @Override
    public long nanosUntilDue(long deadlineMs) {
        long ms = deadlineMs - nowMs();
        return ms <= 0 ? 0 : ms >= Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : ms * 1_000_000L;
    }

    /** {@inheritDoc} On a virtual clock, exactly {@link #nowMs()}: its times are whole. */
    @Override
    public long dueMs() {
        return nowMs();
    }

    /**
     * Moves this clock forward to {@code ms}; does nothing if it is already at or past
     * {@code ms}. Thread-safe: concurrent calls leave the clock at the largest target.
     *
     * @param ms the time to move to, in milliseconds on this clock
     * @throws IllegalArgumentException if {@code ms} is {@link Io#NO_DEADLINE} (the end of time)
     */
    public void advanceTo(long ms) {
        if (ms == Io.NO_DEADLINE) {
            throw new IllegalArgumentException("a virtual clock cannot advance to Io.NO_DEADLINE (no timer pending)");
        }
        long current = now.get();
        while (current < ms) {
            long witness = now.compareAndExchange(current, ms);
            if (witness == current) {
                return;
            }
            current = witness;
        }
    }

    @Override
    public boolean isVirtual() {
        return true;
    }

    @Override
    public String toString() {
        return "VirtualClock[" + nowMs() + " ms]";
    }
}
