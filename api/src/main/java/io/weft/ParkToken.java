package io.weft;

import io.weft.internal.CancelScope;
import io.weft.internal.Context;
import io.weft.internal.ParkClock;
import io.weft.internal.Task;
import io.weft.internal.Wake;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * A one-shot wake-up for one suspension: the thread that creates it parks on it with
 * {@link Io#suspendRaw}, anyone may ready it with {@link Io#ready}. Thread-safe.
 *
 * <p>One-shot and idempotent: readying a token before its park makes the park return at once;
 * readying it again does nothing; and because every suspension uses a fresh token, a stale ready
 * (of an older token) never wakes a later park.
 *
 * {@snippet :
 * ParkToken park = ParkToken.create();
 * registerCallback(() -> io.ready(park));   // someone readies it later, from any thread
 * io.suspendRaw(park);                      // parks until then; throws Cancelled if cancelled
 * }
 */
public final class ParkToken {
    /*
     * Implementation notes.
     *
     * State: one volatile int, PENDING -> READY, set once by tryReady() with a CAS (the winner
     * unparks the owner). Written by any readier, read by the owner's wait loop.
     *
     * Cancellation: suspend() is the runtime half of Io.suspendRaw. It publishes this token as the
     * task's parked token (Task.enterPark), then re-reads the task's state; a canceller sets its
     * cancel bit, then reads the parked token and unparks the owner. Both sides use volatile
     * (sequentially consistent) accesses, so at least one sees the other: either the task sees the
     * cancel before parking, or the canceller sees the token and wakes it (no lost cancel).
     * A cancel does NOT ready the token: it only unparks the owner, whose loop re-checks. That
     * keeps a shielded task parked after a cancel (a ready would make its sleep return early).
     *
     * Interrupts: LockSupport.park returns at once while the interrupt flag is set, which would
     * turn the loop into a spin, so the loop clears the flag. Inside a task it keeps waiting and
     * restores the flag on exit: Future.cancel is how tasks are stopped. A plain thread (outside
     * any task, e.g. main awaiting a result) has no cancel of its own, so an interrupt ends its
     * wait with Cancelled, the flag set again: test timeouts and executor shutdowns work. A plain
     * thread that owns a structured scope can also be stopped by it (CancelScope): its wait loop
     * checks the thread's scopes as a task's checks the task's state.
     *
     * Linked when the class loads: the static initializer runs tryReady's CAS on a token already
     * ready (it fails; nobody is unparked) and loads Wake (an unpark of null), so a first wake-up
     * made with the heap full needs no allocation for either (WaiterStack's notes, "Linked when
     * the class loads"; FullHeapCompletionTest, FullHeapWakeUpTest).
     */

    private static final int PENDING = 0;
    private static final int READY = 1;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(ParkToken.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
        // Links tryReady's CAS and loads Wake now, not at a first wake-up that may come with the
        // heap full (a call site's first run, a class's loading, allocates; see WaiterStack's
        // notes, "Linked when the class loads"). The token is ready already: the CAS fails; an
        // unpark of null unparks no thread.
        try {
            ParkToken linking = new ParkToken(Thread.currentThread(), null, null);
            linking.state = READY;
            linking.tryReady();
            Wake.unpark(null);
        } catch (Throwable notLinked) {
            // best effort: a class whose initializer threw could never be used again
        }
    }

    private final Thread owner;
    private final Task<?> task;
    private final Object blocker;
    /**
     * When the owner began to park on this token, in units of 2^20 ns (about 1 ms) of {@link
     * System#nanoTime()}, truncated to an int (it fits beside the other fields in 32 bytes, and
     * wraps only after about 26 days, longer than any wait it measures); {@link #NOT_PARKED}
     * until then. Stamped by the owner when it parks, not when the token is made: most tokens are
     * readied before their owner parks (a help, a hand-off). The stamp comes from ParkClock,
     * which spares the clock read (about 25 ns on a virtual machine's clock source) while a
     * runtime keeps its tick fresh. Plain: only the owner writes it; a diagnostic read from
     * another thread may see the old value.
     */
    private int since = NOT_PARKED;

    private volatile int state;

    private ParkToken(Thread owner, Task<?> task, Object blocker) {
        this.owner = owner;
        this.task = task;
        this.blocker = blocker;
    }

    /** {@link #since} before the owner parks. */
    private static final int NOT_PARKED = Integer.MIN_VALUE;

    /**
     * Creates a token for the calling thread (and its current task, if any) to park on once.
     *
     * @return a new, not yet readied token
     */
    public static ParkToken create() {
        return new ParkToken(Thread.currentThread(), Context.currentTask(), null);
    }

    /**
     * Creates a token, as {@link #create()} does, that says what the waiter waits for: the future,
     * channel, semaphore or timer that will ready it. It is the park blocker a thread dump shows
     * ({@link java.util.concurrent.locks.LockSupport#getBlocker}) and what an Io's diagnostics report.
     *
     * @param blocker what the wait is for
     * @return a new, not yet readied token
     * @throws NullPointerException if {@code blocker} is null
     */
    public static ParkToken create(Object blocker) {
        return new ParkToken(Thread.currentThread(), Context.currentTask(), Objects.requireNonNull(blocker, "blocker"));
    }

    /**
     * Returns what the waiter waits for, as given to {@link #create(Object)}; null if not given.
     *
     * @return the blocker, or null
     */
    public Object blocker() {
        return blocker;
    }

    /**
     * Returns how long the owner has been parked on this token (since its wait began), to about a
     * millisecond; zero if it has not parked on it. While a FiberIo's stall watch keeps the
     * stamp's clock (see FiberIo's builder, {@code stallThreshold}), the age may also read long by
     * however late that watch's thread was scheduled when the wait began.
     *
     * @return the time since the owner began to park on this token
     */
    public java.time.Duration age() {
        int began = since;
        if (began == NOT_PARKED) {
            return java.time.Duration.ZERO;
        }
        int now = ParkClock.exact();
        return java.time.Duration.ofNanos(Math.max(0, now - began) * (1L << ParkClock.SHIFT));
    }

    /**
     * Returns the thread that created this token and is the only one that may park on it.
     *
     * @return the owner thread
     */
    public Thread owner() {
        return owner;
    }

    /**
     * Returns whether this token has been readied.
     *
     * @return {@code true} once readied
     */
    public boolean isReady() {
        return state == READY;
    }

    /**
     * Marks this token ready and unparks its owner; the building block of {@link Io#ready}.
     * Idempotent.
     *
     * @return {@code true} if this call readied the token, {@code false} if it already was
     */
    public boolean tryReady() {
        if (STATE.compareAndSet(this, PENDING, READY)) {
            Wake.unpark(owner);
            return true;
        }
        return false;
    }

    /**
     * The runtime half of {@link Io#suspendRaw}: runs the cancellation protocol around an Io's own
     * way of waiting. Throws {@link Cancelled} at once if the current task's cancellation is in
     * effect; otherwise calls {@code waitStep} until this token is readied or the task's
     * cancellation takes effect (then throws {@code Cancelled}).
     *
     * <p>{@code waitStep} waits for a while and returns; it must return when the owner thread is
     * unparked ({@link LockSupport#unpark}) and may return spuriously. {@code LockSupport.park(this)}
     * is the simplest correct step; an inline Io also fires its timers there.
     *
     * @param waitStep one bounded wait of the Io
     * @throws Cancelled if the current task's cancellation is in effect, or if a plain thread
     *     (outside any task) is interrupted while it waits; its interrupt flag stays set
     * @throws IllegalStateException if called by a thread other than the owner, or in another task
     * @throws NullPointerException if {@code waitStep} is null
     */
    public void suspend(Runnable waitStep) {
        Objects.requireNonNull(waitStep, "waitStep");
        suspendWith(waitStep);
    }

    /**
     * {@link #suspend(Runnable)} whose wait step is {@code LockSupport.park} with this token's
     * {@linkplain #blocker() blocker} (this token if none) as the park blocker, so a thread dump
     * shows what the waiter waits for.
     *
     * @throws Cancelled as {@link #suspend(Runnable)} does
     * @throws IllegalStateException as {@link #suspend(Runnable)} does
     */
    public void suspend() {
        suspendWith(null);
    }

    private void suspendWith(Runnable waitStep) {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("a ParkToken is parked on only by the thread that created it (" + owner
                    + "), not " + Thread.currentThread());
        }
        if (task != Context.currentTask()) {
            throw new IllegalStateException("a ParkToken is parked on only inside the task that created it");
        }
        if (task == null) {
            CancelScope.throwIfPlainThreadCancelled(); // a plain thread's scope (a Scope it owns) stopped
            waitUntil(waitStep, null);
            CancelScope.throwIfPlainThreadCancelled();
            return;
        }
        task.enterPark(this);
        try {
            waitUntil(waitStep, task);
        } finally {
            task.exitPark();
        }
        task.throwIfCancelled();
    }

    private void waitUntil(Runnable waitStep, Task<?> parked) {
        if (state != READY) {
            since = ParkClock.now(); // the wait begins (see `since`)
        }
        boolean interrupted = false;
        try {
            while (state != READY
                    && (parked == null ? !CancelScope.plainThreadCancelled() : !parked.isCancellationEffective())) {
                if (waitStep != null) {
                    waitStep.run();
                } else {
                    LockSupport.park(blocker != null ? blocker : this);
                }
                if (Thread.interrupted()) {
                    if (parked == null) {
                        interrupted = true;
                        throw new Cancelled("the waiting thread " + owner.getName() + " was interrupted");
                    }
                    interrupted = true; // a task stops by cancel(), not by interrupt: keep waiting
                }
            }
        } finally {
            if (interrupted) {
                owner.interrupt();
            }
        }
    }

    @Override
    public String toString() {
        return "ParkToken[" + (isReady() ? "ready" : "pending") + ", owner=" + owner
                + (blocker != null ? ", waiting for " + blocker : "") + "]";
    }
}
