package io.weft.fiber;

import io.weft.Cancelled;
import io.weft.Io;
import io.weft.internal.Sleep;
import io.weft.internal.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.RunnableScheduledFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@link ScheduledExecutorService} view of a {@link FiberIo} ({@link FiberIo#executor()}):
 * every submission is a Weft task of that FiberIo, so JDK-style code (CompletableFuture, HttpClient,
 * Reactor schedulers) runs on its fibers. See {@link FiberIo#executor()} for the rules.
 */
final class FiberExecutor implements ScheduledExecutorService {
    /*
     * Implementation notes.
     *
     * Each submission is one Submission: a java.util.concurrent future over one Weft task. The
     * task's body claims the submission (WAITING -> RUNNING, one CAS) right before it calls the
     * user's code; shutdownNow claims it the other way (WAITING -> DRAINED) before it cancels the
     * task. Exactly one CAS wins, so a submission is either run or handed back by shutdownNow,
     * never both and never neither; whoever runs a handed-back one moves it DRAINED -> RUN_BY_CALLER
     * (once) and completes its future. A cancel moves WAITING -> CANCELLED (a delayed task waking
     * then finds it taken and does not run), and a submitter that finds the executor shut down
     * after adding its entry moves WAITING -> REJECTED before refusing (if shutdownNow drained the
     * entry first, the submission stands: it is in shutdownNow's list) (a delayed submission sleeping in its task is still WAITING: it
     * has not commenced, so shutdownNow hands it back).
     *
     * The JDK future is a CompletableFuture completed from the task's outcome by the task's one
     * onDone action (the same action removes the submission from `live`). cancel() cancels that
     * CompletableFuture first, so the JDK rule holds at once (after cancel returned true, isDone
     * and isCancelled are true and get() throws), and then the task, which unwinds at its next
     * suspend point; awaitTermination waits for that unwinding, as it does for a pool's threads.
     * A drained submission's future stays pending until whoever got it from shutdownNow runs it.
     *
     * Termination: `live` is added to before the spawn and removed from when the task is done.
     * A submitter adds, then reads `shutdown`; shutdown() writes `shutdown`, then reads whether
     * `live` is empty (all volatile or ConcurrentHashMap accesses, so one side sees the other):
     * either the submitter sees the shutdown and takes its entry back (rejected), or shutdown sees
     * the entry and the entry's removal terminates. `terminated` is a latch counted down once.
     *
     * Delays: a delayed first run (and a periodic run not yet due) waits on a timer at its
     * absolute due time (Sleep.sleepUntil), so the clock's rule for timers applies: on a real
     * clock it runs once the reading has passed the due time, never on a reading that only
     * reached it (which can come a fraction of a millisecond after the submission).
     *
     * shutdown: a periodic submission between runs is cancelled; one in a run is left to finish
     * (`inRun`, volatile, against the volatile `shutdown`: the loop writes inRun then reads
     * shutdown, shutdown() writes shutdown then reads inRun, so one of them sees the other) and
     * its loop then ends it, cancelled, without another run.
     *
     * Per submission: the task, the Submission, its CompletableFuture, a map entry and the onDone
     * node; one lock-free map insert and removal. An adapter for JDK-style code: Io.async is the
     * lean path.
     */

    private static final VarHandle CLAIM;

    static {
        try {
            CLAIM = MethodHandles.lookup().findVarHandle(Submission.class, "claim", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int WAITING = 0;
    private static final int RUNNING = 1;
    private static final int DRAINED = 2;
    private static final int RUN_BY_CALLER = 3;
    private static final int CANCELLED = 4;
    private static final int REJECTED = 5;

    private final FiberIo io;
    private final Set<Submission<?>> live = ConcurrentHashMap.newKeySet();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private volatile boolean shutdown;

    FiberExecutor(FiberIo io) {
        this.io = io;
    }

    // ---------------------------------------------------------------- submitting

    @Override
    public void execute(Runnable command) {
        Objects.requireNonNull(command, "command");
        start(new Submission<>(command, Executors.callable(command, null), AT_ONCE, 0, true));
    }

    @Override
    public <T> Future<T> submit(Callable<T> task) {
        Objects.requireNonNull(task, "task");
        return start(new Submission<>(task, task, AT_ONCE, 0, false));
    }

    @Override
    public Future<?> submit(Runnable task) {
        Objects.requireNonNull(task, "task");
        return start(new Submission<>(task, Executors.callable(task, null), AT_ONCE, 0, false));
    }

    @Override
    public <T> Future<T> submit(Runnable task, T result) {
        Objects.requireNonNull(task, "task");
        return start(new Submission<>(task, Executors.callable(task, result), AT_ONCE, 0, false));
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(unit, "unit");
        return start(new Submission<>(command, Executors.callable(command, null), dueMs(delay, unit), 0, false));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        Objects.requireNonNull(callable, "callable");
        Objects.requireNonNull(unit, "unit");
        return start(new Submission<>(callable, callable, dueMs(delay, unit), 0, false));
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return periodic(command, initialDelay, period, unit, true);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return periodic(command, initialDelay, delay, unit, false);
    }

    private ScheduledFuture<?> periodic(Runnable command, long initialDelay, long step, TimeUnit unit, boolean rate) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(unit, "unit");
        if (step <= 0) {
            throw new IllegalArgumentException((rate ? "period" : "delay") + " must be positive, got " + step);
        }
        long stepMs = Math.max(1, ceilMillis(unit.toNanos(step)));
        return start(new Submission<>(
                command, Executors.callable(command, null), dueMs(initialDelay, unit), rate ? stepMs : -stepMs, false));
    }

    private <T> Submission<T> start(Submission<T> s) {
        if (isShutdown()) {
            throw new RejectedExecutionException(this + " is shut down");
        }
        Task<T> task = Task.spawned(io, s::runInTask);
        s.task = task; // before the entry is visible: shutdown() and shutdownNow() cancel it
        live.add(s);
        if (isShutdown()) { // raced shutdown(): it may not have seen the entry, so take it back
            if (!CLAIM.compareAndSet(s, WAITING, REJECTED)) {
                // shutdownNow took it already and hands it back: accepted, not refused. Its task
                // was cancelled before it started: retire the entry as its onDone would.
                task.onDone(s::taskDone);
                return s;
            }
            live.remove(s);
            tryTerminate();
            throw new RejectedExecutionException(this + " is shut down");
        }
        task.onDone(s::taskDone); // a cancel by shutdownNow from here on retires the entry
        try {
            io.spawnRaw(task);
        } catch (IllegalStateException closed) { // the FiberIo closed meanwhile
            task.cancel(); // done at once (it never started): its onDone removes the entry
            throw new RejectedExecutionException(io + " is closed", closed);
        }
        return s;
    }

    /** A submission's first due time: {@link #AT_ONCE} for no delay, else now plus the delay rounded up, saturating. */
    private long dueMs(long delay, TimeUnit unit) {
        if (delay <= 0) {
            return AT_ONCE;
        }
        long now = io.nowMs();
        long ms = ceilMillis(unit.toNanos(delay));
        return ms >= Io.NO_DEADLINE - now ? Io.NO_DEADLINE : now + ms;
    }

    /** dueMs for a submission without a delay: it runs at once, without waiting for a timer. */
    private static final long AT_ONCE = Long.MIN_VALUE;

    private static long ceilMillis(long nanos) {
        return nanos / 1_000_000 + (nanos % 1_000_000 == 0 ? 0 : 1);
    }

    // ---------------------------------------------------------------- invoking

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks) throws InterruptedException {
        return invokeAll(tasks, Long.MAX_VALUE, TimeUnit.NANOSECONDS);
    }

    @Override
    public <T> List<Future<T>> invokeAll(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
            throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        List<Future<T>> futures = new ArrayList<>(tasks.size());
        for (Callable<T> task : tasks) {
            Objects.requireNonNull(task, "a task");
        }
        long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 2);
        try {
            for (Callable<T> task : tasks) {
                futures.add(submit(task));
            }
            for (Future<T> f : futures) {
                try {
                    f.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (ExecutionException | CancellationException done) {
                    // done either way: its future reports it
                } catch (TimeoutException late) {
                    break; // the rest are cancelled below
                }
            }
        } finally {
            for (Future<T> f : futures) {
                f.cancel(true); // a no-op on the done ones
            }
        }
        return futures;
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks) throws InterruptedException, ExecutionException {
        try {
            return invokeAny(tasks, Long.MAX_VALUE, TimeUnit.NANOSECONDS);
        } catch (TimeoutException cannot) {
            throw new AssertionError("an unbounded invokeAny timed out", cannot);
        }
    }

    @Override
    public <T> T invokeAny(Collection<? extends Callable<T>> tasks, long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        Objects.requireNonNull(unit, "unit");
        if (tasks.isEmpty()) {
            throw new IllegalArgumentException("invokeAny needs at least one task");
        }
        for (Callable<T> task : tasks) {
            Objects.requireNonNull(task, "a task");
        }
        long deadline = System.nanoTime() + Math.min(unit.toNanos(timeout), Long.MAX_VALUE / 2);
        LinkedBlockingQueue<Submission<T>> done = new LinkedBlockingQueue<>();
        List<Submission<T>> started = new ArrayList<>(tasks.size());
        try {
            for (Callable<T> task : tasks) {
                Submission<T> s = start(new Submission<>(task, task, AT_ONCE, 0, false));
                started.add(s);
                s.future.whenComplete((value, failure) -> done.add(s));
            }
            ExecutionException last = null;
            for (int left = started.size(); left > 0; left--) {
                Submission<T> s = done.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (s == null) {
                    throw new TimeoutException("no task of invokeAny succeeded within " + timeout + " " + unit);
                }
                try {
                    return s.future.get();
                } catch (ExecutionException failed) {
                    last = failed;
                } catch (CancellationException cancelled) {
                    last = new ExecutionException(cancelled);
                }
            }
            throw last;
        } finally {
            for (Submission<T> s : started) {
                s.cancel(true);
            }
        }
    }

    // ---------------------------------------------------------------- lifecycle

    @Override
    public void shutdown() {
        shutdown = true;
        for (Submission<?> s : live) {
            // periodic submissions end at shutdown, delayed one-shots still run; a periodic run in
            // progress finishes (an orderly shutdown, as the JDK's scheduled pool) and its loop
            // then ends it: the volatile `shutdown` written above and `inRun` read here against
            // the loop's write of `inRun` and read of `shutdown` (one side sees the other)
            if (s.periodStep != 0 && !s.inRun) {
                s.cancel(true); // between runs: its sleep or yield throws Cancelled
            }
        }
        tryTerminate();
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> neverRan = new ArrayList<>();
        for (Submission<?> s : live) {
            if (CLAIM.compareAndSet(s, WAITING, DRAINED)) {
                neverRan.add(s.executed ? (Runnable) s.original : s);
                s.task.cancel(); // its future stays pending: the caller got it back to run
            } else {
                s.cancel(true); // begun: cancelled, its future at once
            }
        }
        tryTerminate();
        return neverRan;
    }

    @Override
    public boolean isShutdown() {
        return shutdown || io.isClosing();
    }

    @Override
    public boolean isTerminated() {
        tryTerminate(); // the FiberIo may have closed since the last look
        return terminated.getCount() == 0;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        Objects.requireNonNull(unit, "unit");
        tryTerminate(); // the FiberIo may have closed since the last look
        return terminated.await(timeout, unit);
    }

    /** Called by the FiberIo as it closes: no more submissions; its cancel of every task ends the rest. */
    void ioClosing() {
        shutdown();
    }

    private void tryTerminate() {
        if (isShutdown() && live.isEmpty() && terminated.getCount() != 0) {
            terminated.countDown();
            io.forget(this);
        }
    }

    @Override
    public String toString() {
        return "FiberExecutor[" + io.name() + ", " + live.size() + " live"
                + (isTerminated() ? ", terminated" : isShutdown() ? ", shut down" : "") + "]";
    }

    // ---------------------------------------------------------------- one submission

    /** One submission: the JDK future of one Weft task. */
    private final class Submission<T> implements RunnableScheduledFuture<T> {
        final Object original;
        final Callable<T> body;
        final CompletableFuture<T> future = new CompletableFuture<>();
        /** When to run first, on the FiberIo's clock; then, for a periodic one, when to run next. */
        volatile long dueMs;
        /** Whether the first run waits for {@link #dueMs} (a positive delay) or starts at once. */
        final boolean delayed;
        /** 0: one run; > 0: a fixed rate of that many ms; < 0: a fixed delay of minus that many. */
        final long periodStep;
        /** Whether this came from execute(): a failure goes to the uncaught-exception handler. */
        final boolean executed;
        /** A periodic submission's body is running (shutdown() lets it finish); see shutdown(). */
        volatile boolean inRun;

        /** Set before the submission is in {@code live}; the one task that runs it. */
        Task<T> task;

        @SuppressWarnings("unused") // CLAIM
        private volatile int claim;

        Submission(Object original, Callable<T> body, long dueMs, long periodStep, boolean executed) {
            this.original = original;
            this.body = body;
            // at once: a periodic one's schedule starts now; a one-shot's due time is only read by
            // getDelay, where 0 says "long due" without a clock read per submission
            this.dueMs = dueMs != AT_ONCE ? dueMs : periodStep != 0 ? io.nowMs() : 0;
            this.delayed = dueMs != AT_ONCE;
            this.periodStep = periodStep;
            this.executed = executed;
        }

        /** The Weft task's body. */
        T runInTask() throws Exception {
            if (delayed) {
                Sleep.sleepUntil(io, dueMs); // the timer's rule: never before the delay has passed
            }
            if (!CLAIM.compareAndSet(this, WAITING, RUNNING)) {
                return null; // drained by shutdownNow: whoever got it runs it
            }
            if (periodStep == 0) {
                return callReporting();
            }
            while (true) {
                inRun = true;
                if (shutdown) {
                    cancel(false); // shut down before this run: ends cancelled, as between runs
                    return null;
                }
                body.call(); // a failure ends the task and suppresses later runs, as the JDK specifies
                inRun = false;
                if (shutdown) {
                    cancel(false); // shut down during the run, which finished: no more runs
                    return null;
                }
                // a fixed rate keeps its schedule (a late run is followed by the next at once, as in
                // the JDK's ScheduledThreadPoolExecutor); a fixed delay counts from this run's end
                dueMs = periodStep > 0 ? dueMs + periodStep : io.nowMs() - periodStep;
                if (dueMs < io.nowMs()) {
                    Io.yield(); // behind schedule: still a suspend point, so a cancel ends it and others run
                } else {
                    Sleep.sleepUntil(io, dueMs); // a reading at dueMs has not passed it (a real clock's truncation)
                }
            }
        }

        private T callReporting() throws Exception {
            if (!executed) {
                return body.call();
            }
            try {
                return body.call();
            } catch (Cancelled cancelled) {
                if (task.isCancelRequested() || task.isCancellationEffective()) {
                    throw cancelled; // its own cancellation: nothing failed
                }
                report(cancelled); // one from elsewhere (an await of a cancelled future): as Io.launch
                return null;
            } catch (RuntimeException | Error failure) { // execute(): nobody holds a future, as Io.launch
                report(failure);
                return null;
            }
        }

        private void report(Throwable failure) {
            Thread self = Thread.currentThread();
            Thread.UncaughtExceptionHandler handler = io.uncaughtExceptionHandler();
            try {
                (handler != null ? handler : self.getUncaughtExceptionHandler()).uncaughtException(self, failure);
            } catch (RuntimeException | Error ignored) {
                // as the JVM does for a thread's handler
            }
        }

        /** The task's one onDone action: copies its outcome (unless drained) and retires the entry. */
        void taskDone() {
            if (claim <= RUNNING) { // a drained one is completed by whoever runs it; a cancelled one is done
                switch (task.state()) {
                    case SUCCESS -> future.complete(task.resultNow());
                    case FAILED -> future.completeExceptionally(task.exceptionNow());
                    default -> future.cancel(false);
                }
            }
            live.remove(this);
            tryTerminate();
        }

        /** Runs a submission handed back by shutdownNow, here; does nothing once done or claimed. */
        @Override
        public void run() {
            if (!CLAIM.compareAndSet(this, DRAINED, RUN_BY_CALLER) || future.isDone()) {
                return; // not handed back, already run, or cancelled meanwhile
            }
            try {
                future.complete(body.call());
            } catch (Throwable failure) {
                future.completeExceptionally(failure);
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            // true only for the call that completed it (CompletableFuture.cancel is true again on a
            // cancelled one; the JDK's Future says a second cancel finds it done)
            if (future.isDone() || !future.completeExceptionally(new CancellationException("cancelled"))) {
                return false;
            }
            CLAIM.compareAndSet(this, WAITING, CANCELLED); // not begun: its task must not begin it
            Task<T> t = task;
            if (t != null) {
                t.cancel(); // a Weft cancel: a running task unwinds at its next suspend point
            }
            return true;
        }

        @Override
        public boolean isCancelled() {
            return future.isCancelled();
        }

        @Override
        public boolean isDone() {
            return future.isDone();
        }

        @Override
        public T get() throws InterruptedException, ExecutionException {
            return future.get();
        }

        @Override
        public T get(long timeout, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            return future.get(timeout, unit);
        }

        @Override
        public boolean isPeriodic() {
            return periodStep != 0;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(dueMs - io.nowMs(), TimeUnit.MILLISECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return other == this
                    ? 0
                    : Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
        }

        @Override
        public String toString() {
            return "Submission[" + original + ", " + (task == null ? "unstarted" : task.toString()) + "]";
        }
    }
}
