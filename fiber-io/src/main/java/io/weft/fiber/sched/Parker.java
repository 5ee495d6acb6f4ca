package io.weft.fiber.sched;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * Puts one worker's carrier thread to sleep until another thread has work for it, or a timeout
 * passes. Thread-safe: only the bound owner thread parks; any thread may unpark.
 *
 * <p>A notification is never lost: an {@link #unpark()} that arrives while the owner is not
 * parked makes the owner's next {@link #park} return at once. Notifications do not accumulate
 * (many unparks before a park release one park). {@code park} may also return spuriously, so the
 * caller re-checks for work after every return.
 *
 * <p>The worker's thread does not exist yet when its {@code Worker} (and so its Parker) is built,
 * so the owner is bound afterwards, once, with {@link #bind}, before the thread's first park:
 *
 * {@snippet :
 * Parker parker = new Parker();                 // in the Worker's constructor
 * Thread carrier = factory.newThread(worker);   // later, by the scheduler
 * parker.bind(carrier);
 * carrier.start();
 *
 * // in the worker's loop, after finding no work (and telling IdleWorkers it is parking):
 * parker.park(TimeUnit.MILLISECONDS.toNanos(10));
 * // in a producer, after pushing work and picking this worker to wake:
 * parker.unpark();
 * }
 */
public final class Parker {
    /*
     * Implementation notes.
     *
     * State machine on one int `state` (Tokio's park/thread.rs, without its mutex and condvar:
     * LockSupport's per-thread permit is the condvar):
     *
     *     EMPTY    -> NOTIFIED  // unpark, owner running: nothing else to do
     *     PARKED   -> NOTIFIED  // unpark, owner parked: also LockSupport.unpark(owner)
     *     NOTIFIED -> NOTIFIED  // unpark again: nothing to do
     *     NOTIFIED -> EMPTY     // park consumes the notification and returns at once
     *     EMPTY    -> PARKED    // park, then LockSupport.parkNanos
     *     PARKED   -> EMPTY     // park returns by timeout or spuriously
     *     NOTIFIED -> EMPTY     // park returns because it was unparked (consumes it)
     *
     * Who writes what: only the owner moves EMPTY -> PARKED and X -> EMPTY; unparkers only ever
     * write NOTIFIED (getAndSet). So after the owner's CAS EMPTY -> PARKED fails, the state can
     * only be NOTIFIED, and after parkNanos returns, getAndSet(EMPTY) both clears PARKED and
     * consumes a notification that raced with the wake-up.
     *
     * No lost wake-up: an unparker's getAndSet(NOTIFIED) and the owner's CAS(EMPTY, PARKED) are
     * read-modify-writes of the same variable, totally ordered. Either the unpark comes first
     * (the CAS fails, park returns at once) or the CAS does (the unparker reads PARKED and calls
     * LockSupport.unpark, whose permit survives even if it lands before parkNanos begins).
     * Memory ordering: all accesses are volatile (sequentially consistent), so the work a
     * producer published before unpark() happens-before the owner's return from park(), which
     * consumed NOTIFIED with a volatile read-modify-write. The owner always consumes with a
     * read-modify-write (CAS or getAndSet), never a plain store of EMPTY: a read-modify-write
     * reads the LAST NOTIFIED written, so it synchronizes with every unparker so far, not only
     * with the first one of a burst. unpark() always does the getAndSet,
     * even when the state is already NOTIFIED: a read-only fast path would be a load after the
     * producer's (possibly release-only) publication store, which may be reordered before it, and
     * the owner could consume the old notification, miss the work and sleep its full timeout.
     *
     * Spurious returns: an unparker that saw PARKED calls LockSupport.unpark after the owner may
     * already have timed out and consumed the notification; the thread's permit then makes the
     * owner's next parkNanos return at once. Harmless (the caller re-checks), and cheaper than
     * looping on the state until the deadline, which would need a clock read per return.
     *
     * Owner: `owner` is volatile, set once by bind() (CAS from null) before the worker's first
     * park, read by park() (owner check) and by unpark(). An unparker that read PARKED also
     * reads the bound owner: the owner bound itself before its CAS to PARKED. Binding in the
     * constructor would force the scheduler to create the thread before the Worker it runs.
     *
     * Alternatives: LockSupport alone (no state) loses nothing either, but cannot tell a
     * notification from a stale permit and unparks a running thread (a syscall) on every
     * notify; a ReentrantLock + Condition (Tokio's std version) costs a lock per park. Padding
     * the state against false sharing is left until a benchmark shows it pays (STYLE: JCTools).
     */

    private static final int EMPTY = 0;
    private static final int PARKED = 1;
    private static final int NOTIFIED = 2;

    private static final VarHandle STATE;
    private static final VarHandle OWNER;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(Parker.class, "state", int.class);
            OWNER = lookup.findVarHandle(Parker.class, "owner", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** EMPTY, PARKED or NOTIFIED. Owner writes EMPTY/PARKED; unparkers write NOTIFIED. */
    private volatile int state;
    /** The only thread that may park; set once by bind, read by park and unpark. */
    private volatile Thread owner;

    /** Creates a parker with no owner yet; {@link #bind} one before the first {@link #park}. */
    public Parker() {}

    /**
     * Binds {@code owner} in place of the previous owner, whose thread has ended (a spare worker's
     * next carrier). A notification left from before is kept: the first park may return at once,
     * which a worker's loop tolerates.
     *
     * @param owner the new owner
     */
    public void rebind(Thread owner) {
        Objects.requireNonNull(owner, "owner");
        OWNER.setVolatile(this, owner);
    }

    /**
     * Makes {@code owner} the one thread that may {@link #park} on this parker. Call once, before
     * that thread's first park (typically before starting it, or as the first thing it does).
     * Thread-safe. An {@link #unpark()} before binding is kept for the owner's first park.
     *
     * @param owner the thread that will park
     * @throws NullPointerException if {@code owner} is null
     * @throws IllegalStateException if an owner is already bound
     */
    public void bind(Thread owner) {
        Objects.requireNonNull(owner, "owner");
        Thread witness = (Thread) OWNER.compareAndExchange(this, (Thread) null, owner);
        if (witness != null) {
            throw new IllegalStateException(
                    "Parker already bound to " + witness.getName() + "; cannot bind " + owner.getName());
        }
    }

    /**
     * Parks the owner thread until {@link #unpark()} is called, {@code timeoutNanos} pass, or it
     * returns spuriously; returns at once if a notification is pending (consuming it). Called only
     * by the owner. A timeout of zero or less never blocks: it only consumes a pending
     * notification.
     *
     * @param timeoutNanos the longest time to park, in nanoseconds
     * @throws IllegalStateException if the calling thread is not the bound owner
     */
    public void park(long timeoutNanos) {
        Thread self = Thread.currentThread();
        Thread bound = owner;
        if (self != bound) {
            throw new IllegalStateException(
                    bound == null
                            ? "Parker.park before bind(owner)"
                            : "only " + bound.getName() + " parks on this Parker, not " + self.getName());
        }
        // Fast path: a notification is already here.
        if (STATE.compareAndSet(this, NOTIFIED, EMPTY) || timeoutNanos <= 0) {
            return;
        }
        if (!STATE.compareAndSet(this, EMPTY, PARKED)) {
            // Only unparkers write anything but EMPTY/PARKED: it is NOTIFIED. Consume it with a
            // read-modify-write, which reads the latest unparker's write (see the notes).
            STATE.getAndSet(this, EMPTY);
            return;
        }
        LockSupport.parkNanos(this, timeoutNanos);
        // PARKED (timeout, spurious) or NOTIFIED (unparked): either way back to EMPTY.
        STATE.getAndSet(this, EMPTY);
    }

    /**
     * Wakes the owner if it is parked, else makes its next {@link #park} return at once.
     * Thread-safe; callable from any thread, before or after {@link #bind}.
     */
    public void unpark() {
        int previous = (int) STATE.getAndSet(this, NOTIFIED);
        if (previous == PARKED) {
            LockSupport.unpark(owner);
        }
    }

    @Override
    public String toString() {
        Thread bound = owner;
        String s = switch (state) {
            case EMPTY -> "empty";
            case PARKED -> "parked";
            case NOTIFIED -> "notified";
            default -> "state " + state;
        };
        return "Parker[" + s + ", owner=" + (bound == null ? "unbound" : bound.getName()) + "]";
    }
}
