package io.weft.internal;

import io.weft.Future;

/**
 * The layout of a task's state word, and what a snapshot of it says: the bits, their meaning, the
 * transitions allowed between them, and pure functions of one read of the word. The word itself
 * is a field of {@link Task}, changed there and in the cancellation protocol ({@link CancelCheck},
 * {@link CancelInterrupts}). Not instantiable; the functions are thread-safe (they read nothing
 * but their argument).
 */
final class TaskState {
    /*
     * Implementation notes.
     *
     * State word (one volatile long in Task, changed by CAS but for the volatile write that
     * publishes a completion claimed through COMPLETING, below):
     *
     *   bits 0-2   lifecycle: NEW, RUNNING, COMPLETING, SUCCEEDED, FAILED, CANCELLED (last three: done)
     *   bit  3     CANCEL_REQUESTED: sticky once set
     *   bit  4     STARTED: set with NEW -> RUNNING and kept, so run() can tell a task cancelled
     *              before start (return quietly) from one run twice (an Io bug: throw)
     *   bit  5     HELPED: set with NEW -> RUNNING when an awaiter claimed the task to run it in
     *              place (claimForHelper; join helping) and kept: its queued entry, run later,
     *              returns quietly, and runHelped runs only a task that has it
     *   bit  6     INTERRUPTING: a canceller is interrupting the task's thread right now; the
     *              task neither completes, enters a shield, starts another task above itself
     *              (CancelInterrupts.hold) nor takes an interrupt back (CancelInterrupts.reclaim)
     *              until it clears
     *   bit  7     INTERRUPTED: a cancel interrupted the task's thread (or the task re-interrupted
     *              itself on leaving a shield) and the task has not absorbed it yet
     *   bit  8     OBSERVED: set on a FAILED task once its failure was reported (await, exceptionNow),
     *              so a supervisor scope knows which failures nobody saw
     *   bit  9     PLAIN_SCOPED: set with NEW -> RUNNING when the task starts, with no task below it,
     *              on a plain thread that has CancelScopes open (an inline Io under a plain owner):
     *              it runs inside them, as an inline child runs inside its parent task's
     *   bit 10     AWAITED: a task has begun an untimed await of this one (sticky until completion,
     *              set by the awaiter with one atomic OR); only an awaited task can close an await
     *              cycle, so only it walks the await chain (see Awaiting)
     *   bit 11     BELOW_SCOPED: set with NEW -> RUNNING when the task starts above another on its
     *              stack that has CancelScopes open, is BELOW_SCOPED or PLAIN_SCOPED: a scope below
     *              may stop it (CancelCheck, "The check's fast path")
     *   bit 12     BELOW_CANCELLED: a task below this one on its stack had its cancel requested,
     *              and every task from there up to this one runs in place (HELPED): only then
     *              does that cancel reach this task; set by the canceller, or by this task as it
     *              starts (CancelCheck); dropped at completion
     *   bits 16-31 shield depth: changed by the task's own thread (enterShield/exitShield), and
     *              cleared by the claim of completion
     *   bits 32-47 inline depth: how many tasks run in place below this one on its stack
     *              (inlineParent chain), saturating; set by the NEW -> RUNNING CAS itself (no
     *              extra atomic, no field), dropped at completion
     *
     * Transitions (who -> what):
     *
     *   NEW -> RUNNING                         // run(): the Io starts the task
     *   NEW -> RUNNING+HELPED                  // claimForHelper: an awaiter runs it in place (runHelped)
     *   NEW -> COMPLETING -> CANCELLED         // cancel() before start: body never runs, done at once
     *   NEW -> COMPLETING -> SUCCEEDED|FAILED|CANCELLED      // bodiless tasks, completed from outside
     *   RUNNING -> RUNNING+CANCEL_REQUESTED    // cancel() while running: wakes the parked task
     *   RUNNING -> SUCCEEDED|FAILED|CANCELLED  // the body returned or threw (its own thread: one CAS)
     *
     * COMPLETING makes completion a claim-then-publish where several threads may complete: the
     * one thread whose CAS claimed it writes the outcome, then publishes the final lifecycle with
     * a volatile write. A cancel that sees COMPLETING reports ALREADY_DONE: the outcome is
     * already decided. A RUNNING task is completed only by its own thread (a cancel only sets
     * CANCEL_REQUESTED), so it needs no claim: it writes the outcome and moves RUNNING -> done
     * with one CAS, retrying (and recomputing the outcome) if a cancel changed the word.
     *
     * A value returned after CANCEL_REQUESTED is dropped (CANCELLED): once cancel() returned true
     * the future never succeeds. A non-Cancelled exception is kept (FAILED): nothing is replaced.
     * Packing cancel and shield depth in one word makes "cancelled and not shielded" one atomic
     * read, so a canceller decides whether to wake the task from the same snapshot the task
     * itself checks.
     *
     * Why a class of constants and functions, not an object: the word is one field of the task
     * (a spawn allocates the task and nothing else), so what reads it takes a snapshot (a long)
     * and asks this class; only Task and the two cancellation classes write it.
     */

    static final long LIFECYCLE = 0b111L;
    static final long NEW = 0;
    static final long RUNNING = 1;
    static final long SUCCEEDED = 2;
    static final long FAILED = 3;
    static final long CANCELLED = 4;
    /** Transient: the completing thread is writing the outcome. Not done yet, no longer cancellable. */
    static final long COMPLETING = 5;

    static final long CANCEL_REQUESTED = 1L << 3;
    /** Set by the NEW -> RUNNING transition and kept: tells "cancelled before start" apart. */
    static final long STARTED = 1L << 4;
    /** Set with NEW -> RUNNING when an awaiter claimed the task to run it in place (join helping). */
    static final long HELPED = 1L << 5;
    /** A canceller is interrupting the task's thread; see CancelInterrupts. */
    static final long INTERRUPTING = 1L << 6;
    /** A cancel's interrupt was delivered and not yet absorbed; see CancelInterrupts. */
    static final long INTERRUPTED = 1L << 7;
    /** Set on a done, failed task once its failure was reported to someone (await, exceptionNow). */
    static final long OBSERVED = 1L << 8;
    /** Started on a plain thread with CancelScopes open, no task below it: it runs inside them. */
    static final long PLAIN_SCOPED = 1L << 9;
    /** A task has begun an untimed await of this one: sticky until completion; see the notes. */
    static final long AWAITED = 1L << 10;
    /** A task below this one on its stack has CancelScopes open (or is plain-scoped); see CancelCheck. */
    static final long BELOW_SCOPED = 1L << 11;
    /** A task below this one on its stack had its cancel requested; see CancelCheck. */
    static final long BELOW_CANCELLED = 1L << 12;

    static final int SHIELD_SHIFT = 16;
    static final long SHIELD_ONE = 1L << SHIELD_SHIFT;
    static final long SHIELD_MASK = 0xFFFFL << SHIELD_SHIFT;
    private static final int DEPTH_SHIFT = 32;
    private static final long DEPTH_MASK = 0xFFFFL << DEPTH_SHIFT;
    private static final int MAX_DEPTH = 0xFFFF;

    private TaskState() {}

    /** Whether the word says done: succeeded, failed or cancelled (not while COMPLETING). */
    static boolean isDone(long s) {
        long life = s & LIFECYCLE;
        return life == SUCCEEDED || life == FAILED || life == CANCELLED;
    }

    /** Whether the word is NEW or RUNNING: the task may still be completed or cancelled. */
    static boolean isLive(long s) {
        long life = s & LIFECYCLE;
        return life == NEW || life == RUNNING;
    }

    /** Whether the lifecycle and HELPED say: running, in place under an awaiter. */
    static boolean isRunningHelped(long s) {
        return (s & (LIFECYCLE | HELPED)) == (RUNNING | HELPED);
    }

    /** The shield depth in {@code s}. */
    static int shieldDepth(long s) {
        return (int) ((s & SHIELD_MASK) >>> SHIELD_SHIFT);
    }

    /** The inline depth in {@code s}: how many tasks run in place below the task on its stack. */
    static int inlineDepth(long s) {
        return (int) ((s & DEPTH_MASK) >>> DEPTH_SHIFT);
    }

    /** The bits of inline depth {@code depth}, saturating at the field's maximum. */
    static long inlineDepthBits(int depth) {
        return (long) Math.min(depth, MAX_DEPTH) << DEPTH_SHIFT;
    }

    /**
     * Whether a queued entry of a task in state {@code s} has nothing to run: an awaiter ran it in
     * place (HELPED), or it was cancelled before it started.
     */
    static boolean nothingToRun(long s) {
        return (s & HELPED) != 0 || ((s & LIFECYCLE) == CANCELLED && (s & STARTED) == 0);
    }

    /** What {@link Future#state()} reports for {@code s}. */
    static Future.State futureState(long s) {
        return switch ((int) (s & LIFECYCLE)) {
            case (int) SUCCEEDED -> Future.State.SUCCESS;
            case (int) FAILED -> Future.State.FAILED;
            case (int) CANCELLED -> Future.State.CANCELLED;
            default -> Future.State.PENDING;
        };
    }

    /** The lifecycle's name in {@code s}, for messages. */
    static String lifecycleName(long s) {
        return switch ((int) (s & LIFECYCLE)) {
            case (int) NEW -> "NEW";
            case (int) RUNNING -> "RUNNING";
            case (int) SUCCEEDED -> "SUCCESS";
            case (int) FAILED -> "FAILED";
            case (int) COMPLETING -> "COMPLETING";
            default -> "CANCELLED";
        };
    }
}
