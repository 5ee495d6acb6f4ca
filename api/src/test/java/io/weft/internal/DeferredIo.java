package io.weft.internal;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.TimerHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.Queue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.awaitility.Awaitility;

/**
 * A test {@link Io} that does nothing by itself: the test decides when tasks run and when time
 * passes. Thread-safe.
 *
 * <ul>
 *   <li>{@link #spawnRaw} queues the task; {@link #runNext()} / {@link #runAll()} run queued tasks
 *       on the calling thread, whichever thread that is (a task that parks blocks its runner).
 *   <li>{@link #suspendRaw} parks the calling thread with {@link LockSupport#park(Object)}, the
 *       token as blocker (so a test can see a thread parked on a token), through
 *       {@link ParkToken#suspend}; {@link #ready} signals the token (or, between
 *       {@link #holdReadies} and {@link #releaseReadies}, records it to signal then).
 *   <li>The clock is manual: it starts at 0 and moves only with {@link #advance}, which readies
 *       the tokens of timers that became due. {@link #poll} never waits: it runs queued tasks,
 *       fires timers already due and returns the next deadline.
 * </ul>
 *
 * {@snippet :
 * DeferredIo io = new DeferredIo();
 * Task<String> task = io.async(() -> "hi");   // queued, not run
 * io.runAll();                                // runs it here
 * }
 */
class DeferredIo implements Io { // not final: a test may register a subclass of its own (HelpsAwaiters)
    private final Queue<RawTask> queue = new ConcurrentLinkedQueue<>();
    /** Guards {@link #now}, {@link #timers} and {@link #timerSeq}. */
    private final Object clockLock = new Object();

    private final PriorityQueue<Timer> timers = new PriorityQueue<>(
            Comparator.comparingLong((Timer t) -> t.deadlineMs).thenComparingLong(t -> t.seq));
    private long now;
    private long timerSeq;
    /** Guards {@link #heldReadies}. */
    private final Object readyLock = new Object();
    /** The tokens {@link #ready} held back since {@link #holdReadies}, in order; null when not holding. */
    private List<ParkToken> heldReadies;

    /** Spawns {@code body} with {@link Io#async} while this Io is installed; it runs when the test runs it. */
    <T> Task<T> async(Callable<T> body) {
        return Task.of(Io.with(this).call(() -> Io.async(body)), "future");
    }

    /** Runs the oldest queued task on the calling thread; returns false if none was queued. */
    boolean runNext() {
        RawTask task = queue.poll();
        if (task == null) {
            return false;
        }
        task.run();
        return true;
    }

    /** Runs queued tasks (including those they spawn) until none is left; returns how many ran. */
    int runAll() {
        int n = 0;
        while (runNext()) {
            n++;
        }
        return n;
    }

    /** Starts a daemon platform thread that runs the oldest queued task (daemon: a task that never wakes cannot hold the JVM). */
    Thread runNextOnNewThread(String name) {
        return Thread.ofPlatform().name(name).daemon().start(this::runNext);
    }

    /** Waits (up to 10 s) until {@code thread} is parked by {@link #suspendRaw}, that is, parked on a token. */
    static void awaitParkedOnToken(Thread thread) {
        Awaitility.await("thread " + thread.getName() + " parked on a ParkToken")
                .atMost(Duration.ofSeconds(10))
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> isParkedOnToken(thread));
    }

    /** Returns whether {@code thread} is parked by {@link #suspendRaw} right now. */
    static boolean isParkedOnToken(Thread thread) {
        return thread.getState() == Thread.State.WAITING && LockSupport.getBlocker(thread) instanceof ParkToken;
    }

    /** Returns how many tasks are queued and not yet run. */
    int queued() {
        return queue.size();
    }

    /** Moves the clock forward by {@code ms} and readies the token of every timer now due. */
    void advance(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("the clock never goes back: " + ms);
        }
        synchronized (clockLock) {
            now += ms;
        }
        fireDueTimers();
    }

    /** Returns how many armed timers have neither fired nor been cancelled. */
    int armedTimers() {
        synchronized (clockLock) {
            return timers.size();
        }
    }

    @Override
    public void spawnRaw(RawTask task) {
        queue.add(Objects.requireNonNull(task, "task"));
    }

    @Override
    public void suspendRaw(ParkToken park) {
        Objects.requireNonNull(park, "park");
        park.suspend(() -> LockSupport.park(park));
    }

    @Override
    public void ready(ParkToken park) {
        Objects.requireNonNull(park, "park");
        synchronized (readyLock) {
            if (heldReadies != null) {
                heldReadies.add(park);
                return;
            }
        }
        park.tryReady();
    }

    /**
     * From now until {@link #releaseReadies}, {@link #ready} only records its token: a test can
     * make several wake-ups happen before the woken thread runs.
     */
    void holdReadies() {
        synchronized (readyLock) {
            heldReadies = new ArrayList<>();
        }
    }

    /** Readies the tokens held since {@link #holdReadies}, in order, and stops holding. */
    void releaseReadies() {
        List<ParkToken> held;
        synchronized (readyLock) {
            held = heldReadies;
            heldReadies = null;
        }
        if (held != null) {
            held.forEach(ParkToken::tryReady);
        }
    }

    /** Runs every queued task, fires the timers already due, and never waits for the clock. */
    @Override
    public long poll(long deadlineMs) {
        runAll();
        fireDueTimers();
        synchronized (clockLock) {
            Timer next = timers.peek();
            return next == null ? NO_DEADLINE : next.deadlineMs;
        }
    }

    @Override
    public long nowMs() {
        synchronized (clockLock) {
            return now;
        }
    }

    /** Arms a timer; one already due fires before this returns, one at NO_DEADLINE never fires. */
    @Override
    public TimerHandle armTimer(long deadlineMs, ParkToken park) {
        Objects.requireNonNull(park, "park");
        Timer timer;
        synchronized (clockLock) {
            timer = new Timer(deadlineMs, timerSeq++, park);
            if (deadlineMs != NO_DEADLINE) {
                timers.add(timer);
            }
        }
        fireDueTimers();
        return timer;
    }

    private void fireDueTimers() {
        List<Timer> due = new ArrayList<>();
        synchronized (clockLock) {
            while (!timers.isEmpty() && timers.peek().deadlineMs <= now) {
                due.add(timers.poll());
            }
        }
        // Readied outside the lock: signalling unparks threads that may call back into the clock.
        due.forEach(t -> ready(t.park));
    }

    /** An armed timer; it is pending exactly while it sits in {@link #timers}. */
    private final class Timer implements TimerHandle {
        final long deadlineMs;
        final long seq;
        final ParkToken park;

        Timer(long deadlineMs, long seq, ParkToken park) {
            this.deadlineMs = deadlineMs;
            this.seq = seq;
            this.park = park;
        }

        @Override
        public boolean cancel() {
            synchronized (clockLock) {
                return timers.remove(this);
            }
        }
    }
}
