package io.weft.fiber.sched;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;

/**
 * A deliberately broken copy of {@link Parker} for {@link ParkerUnparkVsParkMutantTest}: its
 * {@link #unpark()} reads the state and then writes NOTIFIED in two steps (a volatile get, then a
 * volatile set) instead of one {@code getAndSet}, so an unpark can be lost. Everything else is
 * Parker's code unchanged. It exists only to show that {@link ParkerUnparkVsParkTest} can fail;
 * never use it for anything else.
 */
final class MutantParker {
    /*
     * Implementation notes: Parker's, except for unpark(). The lost wake-up: the unparker reads
     * EMPTY; the owner's CAS EMPTY -> PARKED succeeds; the unparker writes NOTIFIED and, having
     * read EMPTY, does not call LockSupport.unpark; the owner parks with nobody left to wake it.
     * Parker's getAndSet makes the read and the write one step, which the CAS cannot split.
     */

    private static final int EMPTY = 0;
    private static final int PARKED = 1;
    private static final int NOTIFIED = 2;

    private static final VarHandle STATE;
    private static final VarHandle OWNER;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(MutantParker.class, "state", int.class);
            OWNER = lookup.findVarHandle(MutantParker.class, "owner", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** EMPTY, PARKED or NOTIFIED. Owner writes EMPTY/PARKED; unparkers write NOTIFIED. */
    private volatile int state;
    /** The only thread that may park; set once by bind, read by park and unpark. */
    private volatile Thread owner;

    /** Creates a parker with no owner yet; {@link #bind} one before the first {@link #park}. */
    MutantParker() {}

    /**
     * Makes {@code owner} the one thread that may {@link #park} on this parker. Call once, before
     * that thread's first park (typically before starting it, or as the first thing it does).
     * Thread-safe. An {@link #unpark()} before binding is kept for the owner's first park.
     *
     * @param owner the thread that will park
     * @throws NullPointerException if {@code owner} is null
     * @throws IllegalStateException if an owner is already bound
     */
    void bind(Thread owner) {
        Objects.requireNonNull(owner, "owner");
        Thread witness = (Thread) OWNER.compareAndExchange(this, (Thread) null, owner);
        if (witness != null) {
            throw new IllegalStateException(
                    "MutantParker already bound to " + witness.getName() + "; cannot bind " + owner.getName());
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
    void park(long timeoutNanos) {
        Thread self = Thread.currentThread();
        Thread bound = owner;
        if (self != bound) {
            throw new IllegalStateException(
                    bound == null
                            ? "MutantParker.park before bind(owner)"
                            : "only " + bound.getName() + " parks on this MutantParker, not " + self.getName());
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
    void unpark() {
        // THE BUG: read, then write, in two steps instead of one getAndSet. The owner's CAS
        // EMPTY -> PARKED can land in between: this reads EMPTY, skips LockSupport.unpark, and
        // the owner sleeps on with NOTIFIED in the state.
        int previous = (int) STATE.getVolatile(this);
        STATE.setVolatile(this, NOTIFIED);
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
        return "MutantParker[" + s + ", owner=" + (bound == null ? "unbound" : bound.getName()) + "]";
    }
}
