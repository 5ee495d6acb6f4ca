package io.weft.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A deliberately broken copy of the part of {@link Task}'s state word that the task state word
 * tests race: the lifecycle and CANCEL_REQUESTED bits in one long changed by CAS, the published
 * parked thread, and cancel / complete / park written as Task writes them, except for one
 * {@link Bug}. It exists only to show that those tests can fail; never use it for anything else.
 * (It is a copy of the protocol, not of Task: Task's redundancy, an interrupt when no parked token
 * is seen, would hide the broken step, and a jcstress test cannot patch Task itself.)
 */
final class MutantTaskState {
    /*
     * Implementation notes: Task's protocol, reduced.
     *   cancel:   CAS RUNNING -> RUNNING|CANCEL_REQUESTED, THEN read `parked` and unpark it.
     *   park:     publish `parked` (volatile), THEN re-check the state, park while not cancelled.
     *   complete: CAS RUNNING[|CANCEL_REQUESTED] -> COMPLETING, then publish SUCCEEDED, or CANCELLED
     *             if the CAS saw CANCEL_REQUESTED (a value after a cancel is dropped).
     * Both halves of the park protocol are volatile, so one side sees the other. The bugs:
     *   CANCEL_READS_PARKED_FIRST: cancel reads `parked` before its CAS. The task publishes, re-checks
     *     (no cancel yet) and parks; the cancel's CAS lands; it unparks the stale null: lost cancel.
     *   COMPLETE_WITHOUT_CAS: complete reads the state, and if no cancel is requested writes SUCCEEDED
     *     with a plain volatile write; a cancel CAS between the read and the write returns true and
     *     the task still succeeds.
     */

    /** Which step of the protocol this copy gets wrong. */
    enum Bug {
        CANCEL_READS_PARKED_FIRST,
        COMPLETE_WITHOUT_CAS
    }

    static final long RUNNING = 1;
    static final long SUCCEEDED = 2;
    static final long CANCELLED = 4;
    private static final long COMPLETING = 5;
    private static final long LIFECYCLE = 0b111L;
    private static final long CANCEL_REQUESTED = 1L << 3;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(MutantTaskState.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Bug bug;
    private volatile long state = RUNNING;
    private volatile Thread parked;

    MutantTaskState(Bug bug) {
        this.bug = bug;
    }

    /** The lifecycle: RUNNING, SUCCEEDED or CANCELLED. */
    long lifecycle() {
        return state & LIFECYCLE;
    }

    /** Requests cancellation; true unless the task was already done (or completing). */
    boolean cancel() {
        Thread early = bug == Bug.CANCEL_READS_PARKED_FIRST ? parked : null;
        while (true) {
            long s = state;
            if ((s & LIFECYCLE) != RUNNING) {
                return false;
            }
            if ((s & CANCEL_REQUESTED) != 0) {
                return true;
            }
            if (STATE.compareAndSet(this, s, s | CANCEL_REQUESTED)) {
                Thread p = bug == Bug.CANCEL_READS_PARKED_FIRST ? early : parked;
                if (p != null) {
                    LockSupport.unpark(p);
                }
                return true;
            }
        }
    }

    /** The task's own thread: parks until a cancel is requested. */
    void parkUntilCancelled() {
        parked = Thread.currentThread();
        while ((state & CANCEL_REQUESTED) == 0) {
            LockSupport.park(this);
        }
        parked = null;
    }

    /** The task's own thread: the body returned a value. */
    void completeWithValue() {
        if (bug == Bug.COMPLETE_WITHOUT_CAS) {
            long s = state;
            state = (s & CANCEL_REQUESTED) != 0 ? CANCELLED : SUCCEEDED;
            return;
        }
        while (true) {
            long s = state;
            if (STATE.compareAndSet(this, s, (s & CANCEL_REQUESTED) | COMPLETING)) {
                state = (s & CANCEL_REQUESTED) != 0 ? CANCELLED : SUCCEEDED;
                return;
            }
        }
    }
}
