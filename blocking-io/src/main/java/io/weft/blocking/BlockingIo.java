package io.weft.blocking;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.TimerHandle;
import io.weft.internal.SideThreads;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * An {@link Io} that runs every task inline on the caller's thread: no threads, no scheduler.
 * Thread-safe; one instance may serve many threads at once. It is the default Io where none is
 * installed.
 *
 * <ul>
 *   <li>{@link #spawnRaw} runs the task to completion before returning, so {@code Io.async}
 *       returns a future that is already done.
 *   <li>{@link #suspendRaw} blocks the calling thread until its token is readied, by a timer (fired
 *       by the waiting thread itself) or by another thread.
 *   <li>The clock is real ({@link System#nanoTime}) by default. With {@link Builder#virtualClock()}
 *       it is virtual: it starts at zero and, whenever a waiting thread's token is not ready and
 *       a timer is pending, jumps straight to the earliest deadline. It cannot know that an
 *       unrelated thread is about to ready the waiter, so it is meant for single-threaded programs,
 *       tests and simulations: hours of sleeps take no time.
 *   <li>Threads that Weft starts beside the caller (a {@code Reactive.produce} producer's own
 *       thread) are part of the program: on the virtual clock they take turns with the threads
 *       inside {@code Io.with(io)}, one running at a time, handing over only where one waits in
 *       this Io, and the clock jumps only when all of them wait. A program that uses them prints
 *       the same trace on every run. The flip side: while such a thread is alive, a thread inside
 *       {@code Io.with(io)} must not block outside the Io (a {@code CountDownLatch}, a
 *       {@code Thread.join}) waiting for it, since it holds the turn the other one needs.
 * </ul>
 *
 * {@snippet :
 * Io io = BlockingIo.builder().virtualClock().build();
 * long elapsed = Io.with(io).call(() -> {
 *     Io.sleep(Duration.ofHours(2));     // returns at once: the virtual clock jumps
 *     return io.nowMs();                 // 7_200_000
 * });
 * }
 */
public final class BlockingIo implements Io {
    /*
     * Implementation notes.
     *
     * Waiting: suspendRaw hands ParkToken.suspend a wait step that (1) fires the timers due now,
     * (2) returns if that fired anything (the token may be ready), else (3) parks until the
     * earliest deadline (real clock) or jumps the virtual clock to it. With no timer at all it
     * parks until unparked: only another thread (a ready, a cancel) can help then.
     *
     * Threads: every parked thread waits until the earliest deadline of the shared queue, fires
     * whatever is due and re-parks, so a timer is fired by whichever waiting thread gets there
     * first; its token's owner is unparked by the ready. A timer armed for another thread's token
     * unparks that owner so it recomputes how long to wait.
     *
     * Virtual clock: waits go through Turns instead (the turns of the threads beside the caller,
     * and the clock jumps they allow); poll() keeps the plain rule. See Turns' notes.
     *
     * Alternatives: per-thread timer queues would avoid cross-thread wake-ups, but a token may be
     * armed from any thread; one queue is simpler and BlockingIo is not a throughput runtime.
     */

    static {
        SideThreads.register(BlockingIo.class, new SideThreads() {
            @Override
            public Thread start(Io io, String name, Runnable body) {
                Turns turns = ((BlockingIo) io).turns;
                return turns != null
                        ? turns.start(name, body)
                        : Thread.ofVirtual().name(name).start(body);
            }

            @Override
            public void entering(Io io) {
                Turns turns = ((BlockingIo) io).turns;
                if (turns != null) {
                    turns.entering();
                }
            }

            @Override
            public void yielding(Io io) {
                Turns turns = ((BlockingIo) io).turns;
                if (turns != null) {
                    turns.yieldTurn();
                }
            }

            @Override
            public void leaving(Io io) {
                Turns turns = ((BlockingIo) io).turns;
                if (turns != null) {
                    turns.leaving();
                }
            }
        });
    }

    private final TimerQueue timers = new TimerQueue();
    private final long originNanos;
    /** The virtual clock's time, or null for the real clock. Advanced by waiting threads. */
    private final AtomicLong virtualNow;
    /** With a virtual clock, the turns its threads take; null on the real clock. */
    private final Turns turns;

    private final Thread.UncaughtExceptionHandler uncaughtExceptionHandler;

    /**
     * Creates a BlockingIo on the real clock; the same as {@link #create()}. Public so that
     * {@link java.util.ServiceLoader} can make the default Io on the class path.
     */
    public BlockingIo() {
        this(false, null);
    }

    private BlockingIo(boolean virtualClock, Thread.UncaughtExceptionHandler uncaughtExceptionHandler) {
        this.uncaughtExceptionHandler = uncaughtExceptionHandler;
        this.originNanos = System.nanoTime();
        this.virtualNow = virtualClock ? new AtomicLong() : null;
        this.turns = virtualClock
                ? new Turns(new Turns.Clock() {
                    @Override
                    public int fireDue() {
                        return BlockingIo.this.fireDue();
                    }

                    @Override
                    public long nextDeadline() {
                        return timers.nextDeadline();
                    }

                    @Override
                    public void jumpTo(long deadlineMs) {
                        virtualNow.accumulateAndGet(deadlineMs, Math::max);
                    }
                })
                : null;
    }

    /**
     * Creates a BlockingIo on the real clock.
     *
     * @return a new BlockingIo
     */
    public static BlockingIo create() {
        return new BlockingIo(false, null);
    }

    /**
     * Returns a builder for a BlockingIo with options (a virtual clock).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link BlockingIo}. Not thread-safe; use one builder per thread. */
    public static final class Builder {
        private boolean virtualClock;
        private Thread.UncaughtExceptionHandler uncaughtExceptionHandler;

        private Builder() {}

        /**
         * Makes the clock virtual: it starts at 0 and jumps to the next timer's deadline whenever
         * a waiting thread has nothing else to wait for.
         *
         * @return this builder
         */
        public Builder virtualClock() {
            this.virtualClock = true;
            return this;
        }

        /**
         * Sets where failures of detached tasks ({@link Io#launch}) go; by default the
         * uncaught-exception handler of the thread that ran the task (the caller's, inline).
         *
         * @param handler the handler
         * @return this builder
         */
        public Builder uncaughtExceptionHandler(Thread.UncaughtExceptionHandler handler) {
            this.uncaughtExceptionHandler = Objects.requireNonNull(handler, "handler");
            return this;
        }

        /**
         * Builds the BlockingIo.
         *
         * @return a new BlockingIo
         */
        public BlockingIo build() {
            return new BlockingIo(virtualClock, uncaughtExceptionHandler);
        }
    }

    /**
     * Returns whether this Io's clock is virtual.
     *
     * @return {@code true} for a virtual clock
     */
    public boolean hasVirtualClock() {
        return virtualNow != null;
    }

    @Override
    public void spawnRaw(RawTask task) {
        Objects.requireNonNull(task, "task");
        task.run();
    }

    @Override
    public void suspendRaw(ParkToken park) {
        Objects.requireNonNull(park, "park");
        Turns t = turns;
        if (t == null) {
            park.suspend(() -> waitStep(park));
            return;
        }
        try {
            park.suspend(() -> t.waitStep(park));
        } finally {
            t.resume();
        }
    }

    @Override
    public void ready(ParkToken park) {
        Objects.requireNonNull(park, "park");
        park.tryReady();
    }

    @Override
    public long poll(long deadlineMs) {
        Turns t = turns;
        if (t != null && t.yieldTurn()) {
            return timers.nextDeadline(); // a member stepped aside: what was due fired, the clock stays
        }
        if (fireDue() > 0) {
            return timers.nextDeadline();
        }
        long next = timers.nextDeadline();
        if (next == NO_DEADLINE || next > deadlineMs || deadlineMs <= nowMs()) {
            return next; // a deadline of now never waits, even for a timer that is due in a moment
        }
        waitUntil(next, null, deadlineMs);
        fireDue();
        return timers.nextDeadline();
    }

    @Override
    public Thread.UncaughtExceptionHandler uncaughtExceptionHandler() {
        return uncaughtExceptionHandler;
    }

    @Override
    public long nowMs() {
        AtomicLong v = virtualNow;
        return v != null ? v.get() : (System.nanoTime() - originNanos) / 1_000_000;
    }

    @Override
    public TimerHandle armTimer(long deadlineMs, ParkToken park) {
        Objects.requireNonNull(park, "park");
        TimerHandle handle = timers.arm(deadlineMs, park);
        if (park.owner() != Thread.currentThread()) {
            LockSupport.unpark(park.owner()); // it may be waiting for a later deadline
        }
        return handle;
    }

    /** One wait of a suspended thread: fire what is due, else wait for the next deadline. */
    private void waitStep(ParkToken park) {
        if (fireDue() > 0) {
            return;
        }
        long next = timers.nextDeadline();
        if (next == NO_DEADLINE) {
            LockSupport.park(park);
        } else {
            waitUntil(next, park, NO_DEADLINE);
        }
    }

    /**
     * Waits until a timer at {@code deadlineMs} is due, but on a real clock not past {@code
     * capMs}: the virtual clock jumps, the real one parks (may return early).
     */
    private void waitUntil(long deadlineMs, ParkToken blocker, long capMs) {
        AtomicLong v = virtualNow;
        if (v != null) {
            v.accumulateAndGet(deadlineMs, Math::max);
            return;
        }
        // due once the truncated reading has passed the deadline: see fireDue
        long untilNanos = Math.min(TimeUnit.MILLISECONDS.toNanos(deadlineMs + 1), TimeUnit.MILLISECONDS.toNanos(capMs));
        long waitNanos = untilNanos - (System.nanoTime() - originNanos);
        if (waitNanos > 0) {
            LockSupport.parkNanos(blocker, waitNanos);
        }
    }

    private int fireDue() {
        // A real clock's reading is truncated: a deadline of nowMs() + d can come less than d ms
        // after the reading (read at 4.9 ms, a deadline of 5 is 0.1 ms away). A timer is due only
        // once the reading has passed its deadline, so it never fires early.
        List<ParkToken> due = timers.takeDue(virtualNow != null ? nowMs() : nowMs() - 1);
        for (ParkToken token : due) {
            ready(token);
        }
        return due.size();
    }

    /**
     * Returns how many timers are armed and not yet fired or cancelled; for diagnostics and tests.
     *
     * @return the number of pending timers
     */
    public int pendingTimers() {
        return timers.size();
    }

    @Override
    public String toString() {
        return "BlockingIo[" + (virtualNow != null ? "virtual" : "real") + " clock at " + nowMs() + " ms, "
                + pendingTimers() + " timers]";
    }
}
