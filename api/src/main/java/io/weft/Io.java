package io.weft;

import io.weft.internal.CancelScope;
import io.weft.internal.Context;
import io.weft.internal.DefaultIo;
import io.weft.internal.Races;
import io.weft.internal.RootTasks;
import io.weft.internal.SideThreads;
import io.weft.internal.Sleep;
import io.weft.internal.Task;
import io.weft.internal.Unchecked;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;

/**
 * A runtime for Weft tasks: six raw operations that an implementation provides, and the static
 * entry points ({@link #async}, {@link #race}, {@link #sleep}, {@link #shield}) that every Weft
 * program is written against.
 *
 * <p>The entry points use the <em>installed</em> Io, {@link #current()}: the one bound with
 * {@link #with(Io)} on this thread or inherited by the current task, else the default
 * {@code BlockingIo}. The same program therefore runs unchanged on {@code BlockingIo} (inline, no
 * threads) and {@code FiberIo} (fibers on a work-stealing scheduler):
 *
 * {@snippet :
 * String greeting = Io.with(io).call(() -> {
 *     Future<String> name = Io.async(() -> lookUpName(42));
 *     Future<String> fallback = Io.async(() -> { Io.sleep(Duration.ofMillis(50)); return "friend"; });
 *     return "hello, " + Io.race(name, fallback);
 * });
 * }
 *
 * <h2>The raw operations</h2>
 * Implementations are thread-safe: every raw operation may be called from any thread, although
 * {@link #suspendRaw} only parks the thread that created its token. Users rarely call them
 * directly; the entry points and the methods of {@link Future} are built from them alone:
 * <ul>
 *   <li>{@link #spawnRaw}: run a task, now (inline) or later (on a scheduler);
 *   <li>{@link #suspendRaw} / {@link #ready}: park the current task until its {@link ParkToken}
 *       is readied; the park point is where cancellation is delivered;
 *   <li>{@link #nowMs} / {@link #armTimer} / {@link #poll}: the Io's clock and timers.
 * </ul>
 */
public interface Io {

    /** The deadline that never comes: returned by {@link #poll} when no timer is pending. */
    long NO_DEADLINE = Long.MAX_VALUE;

    // ---------------------------------------------------------------- raw operations

    /**
     * Runs {@code task} exactly once, either before returning (an inline Io) or later on some
     * thread the Io owns (a scheduling Io). The task carries its own error handling: its
     * {@link RawTask#run()} does not throw the body's exception.
     *
     * @param task the task to run
     * @throws NullPointerException if {@code task} is null
     * @throws IllegalStateException if this Io no longer accepts tasks (for example, after close)
     */
    void spawnRaw(RawTask task);

    /**
     * Parks the calling thread until {@code park} is readied; this is the one <em>suspend
     * point</em> of Weft and where cancellation takes effect.
     *
     * <p>If the current task's cancellation is in effect (requested and not shielded) when this is
     * called, or becomes so while parked, this throws {@link Cancelled}, waking the task if needed.
     * A token readied before this call makes it return at once. Implementations delegate the
     * protocol to {@link ParkToken#suspend(Runnable)} and supply only the wait itself.
     *
     * <p>Inside a task, an interrupt does not end the wait (cancel the task instead). On a plain
     * thread outside any task, an interrupt ends the wait with {@code Cancelled} and leaves the
     * thread's interrupt flag set.
     *
     * @param park a token created by the calling thread with {@link ParkToken#create()}
     * @throws Cancelled if the current task's cancellation is in effect, or a plain thread is
     *     interrupted while it waits
     * @throws NullPointerException if {@code park} is null
     * @throws IllegalStateException if {@code park} belongs to another thread
     */
    void suspendRaw(ParkToken park);

    /**
     * Readies {@code park}, waking the thread parked on it (now, or when it parks). Idempotent:
     * readying a token twice, or one whose park has already returned, has no further effect.
     *
     * @param park the token to ready
     * @throws NullPointerException if {@code park} is null
     */
    void ready(ParkToken park);

    /**
     * Makes progress on this Io's own work (fires due timers, runs what is runnable), waiting at
     * most until {@code deadlineMs} on this Io's clock for something to become due. A deadline at
     * or before {@link #nowMs()} never waits.
     *
     * @param deadlineMs the latest time, on this Io's clock, to wait until
     * @return the earliest pending timer deadline after this poll, or {@link #NO_DEADLINE}
     */
    long poll(long deadlineMs);

    /**
     * Returns this Io's clock in milliseconds: monotonic, starting near zero when the Io is
     * created; a virtual clock advances only when nothing else can run.
     *
     * @return the current time on this Io's clock
     */
    long nowMs();

    /**
     * Arms a one-shot timer that {@linkplain #ready readies} {@code park} once
     * {@link #nowMs()} reaches {@code deadlineMs}. A deadline in the past fires promptly; a
     * deadline of {@link #NO_DEADLINE} never fires.
     *
     * @param deadlineMs when to fire, on this Io's clock
     * @param park the token to ready
     * @return a handle that can cancel the timer before it fires
     * @throws NullPointerException if {@code park} is null
     */
    TimerHandle armTimer(long deadlineMs, ParkToken park);

    // ---------------------------------------------------------------- entry points

    /**
     * Returns the installed Io: the one bound by the nearest enclosing {@link #with(Io)} on this
     * thread, or inherited by the current task from its spawner; else the default
     * {@code BlockingIo} (found with {@link java.util.ServiceLoader} in {@code weft-blocking-io}).
     *
     * @return the installed Io, never null
     * @throws IllegalStateException if nothing is installed and no default Io is on the path
     */
    static Io current() {
        Io io = Context.currentIo();
        return io != null ? io : DefaultIo.get();
    }

    /**
     * Returns a binding that runs code with {@code io} installed: {@code Io.with(io).run(...)}.
     *
     * @param io the Io to install
     * @return a binding; reusable and thread-safe
     * @throws NullPointerException if {@code io} is null
     */
    static Binding with(Io io) {
        return new Binding(Objects.requireNonNull(io, "io"));
    }

    /**
     * Starts {@code body} as a new task on the {@linkplain #current() installed} Io and returns its
     * future. The task inherits that Io: {@code Io.current()} inside {@code body} is the same Io,
     * on whatever thread it runs. {@code BlockingIo} runs the body inline before this returns;
     * {@code FiberIo} runs it on a fiber. Spawning is not a suspend point.
     *
     * <p>A failure is kept in the future for whoever awaits it, and reported nowhere else: a task
     * whose future nobody awaits (or checks) fails unseen. For work whose result nobody wants, use
     * {@link #launch}, which reports a failure to a handler; for a group of tasks, a structured
     * scope, whose {@code join} rethrows its children's failures.
     *
     * @param body the task's body; its value becomes the future's value, its exception the
     *     future's failure (a {@link java.util.concurrent.CancellationException}, {@link Cancelled}
     *     included, makes it cancelled)
     * @param <T> the value's type
     * @return the task's future
     * @throws NullPointerException if {@code body} is null
     */
    static <T> Future<T> async(Callable<T> body) {
        Objects.requireNonNull(body, "body");
        Task<T> task = Task.spawnedHere(null, body);
        task.io().spawnRaw(task);
        return task;
    }

    /**
     * {@link #async(Callable)} with a name for the task, for people reading diagnostics: the task's
     * {@code toString}, and on {@code FiberIo} the name of the thread running it (in thread dumps)
     * and its entry in the FiberIo's dump. Names need not be unique.
     *
     * {@snippet :
     * Future<User> user = Io.async("load-user-" + id, () -> users.load(id));
     * }
     *
     * @param name the task's name
     * @param body the task's body
     * @param <T> the value's type
     * @return the task's future
     * @throws NullPointerException if {@code name} or {@code body} is null
     */
    static <T> Future<T> async(String name, Callable<T> body) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(body, "body");
        Task<T> task = Task.spawnedHere(name, body);
        task.io().spawnRaw(task);
        return task;
    }

    /**
     * Waits for the first of {@code a} and {@code b} to complete, cancels the other, and returns
     * the winner's value or rethrows its failure.
     *
     * <ul>
     *   <li>The winner is the first input to complete with a value, a failure or a cancellation.
     *       Inputs that are already complete when the race looks at them tie, and ties go to the
     *       lower argument index ({@code a}), so the outcome is deterministic.
     *   <li>Before returning, the race deregisters its waiter from both inputs and
     *       {@linkplain Future#cancel() cancels} the loser. It returns at winner time and does
     *       not wait for the loser to unwind; {@link #raceAndJoin} does.
     *   <li>The winner's outcome is reported as {@link Future#await()} would: its value, its
     *       unchecked failure (same instance), a checked failure wrapped in
     *       {@link java.util.concurrent.CompletionException}, or {@link Cancelled}.
     *   <li>If the racing task itself is cancelled (on entry, or while waiting), both inputs are
     *       cancelled and {@link Cancelled} is thrown.
     * </ul>
     * Under {@code BlockingIo}, inputs made with {@link #async} are already complete, so {@code a}
     * wins: the same outcome rules, a different interleaving.
     *
     * @param a the first input, which wins ties
     * @param b the second input
     * @param <T> the common value type
     * @return the winner's value
     * @throws Cancelled if the winner was cancelled or the racing task is cancelled
     * @throws NullPointerException if an input is null
     * @throws IllegalArgumentException if an input was not made by Weft
     * @throws IllegalStateException if a task races its own future, or two tasks that run it in
     *     place on the same thread (it runs inline inside them, or they await it before it
     *     started): neither can complete before it does; thrown before the racing task's own
     *     cancellation is looked at, and before either input is cancelled
     */
    static <T> T race(Future<? extends T> a, Future<? extends T> b) {
        return Races.race(a, b, false);
    }

    /**
     * Like {@link #race}, but after cancelling the loser waits for it to finish unwinding (its
     * {@code finally} blocks have run) before reporting the winner. The wait for the loser is
     * shielded: a cancellation of the racing task that arrives meanwhile takes effect at its next
     * suspend point. On a plain thread, an interrupt does not end that wait either; the thread
     * gets it back afterwards. If the race itself is cancelled (or a plain thread interrupted)
     * before a winner, both inputs are cancelled and joined the same way before it throws.
     *
     * @param a the first input, which wins ties
     * @param b the second input
     * @param <T> the common value type
     * @return the winner's value
     * @throws Cancelled if the winner was cancelled or the racing task is cancelled
     * @throws NullPointerException if an input is null
     * @throws IllegalArgumentException if an input was not made by Weft
     * @throws IllegalStateException if a task races its own future, or a task that runs it in place
     *     on the same thread (it runs inline inside that task, or that task awaits it before it
     *     started): that task cannot complete before it does, nor be joined as the loser;
     *     thrown before the racing task's own cancellation is looked at, and before either input
     *     is cancelled
     */
    static <T> T raceAndJoin(Future<? extends T> a, Future<? extends T> b) {
        return Races.race(a, b, true);
    }

    /**
     * Suspends the current task for {@code duration} on the installed Io's clock. Durations of
     * zero or less return at once (without a suspend point); durations are rounded up to whole
     * milliseconds; a duration too large for the clock sleeps until cancelled. A cancelled
     * sleeper wakes at once and throws {@link Cancelled}.
     *
     * @param duration how long to sleep
     * @throws Cancelled if the current task is cancelled before or during the sleep
     * @throws NullPointerException if {@code duration} is null
     */
    static void sleep(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        Sleep.sleep(current(), duration);
    }

    /**
     * Throws {@link Cancelled} if the current task's cancellation is in effect (requested, and no
     * {@linkplain #shield shield} defers it); otherwise returns at once. Never parks, never lets
     * another task run: the cheap check for a loop that computes without suspending. The
     * cancellation may also be a structured scope's (a {@code Scope} whose child failed or whose
     * deadline passed stops its owner, a task or a plain thread, until the scope ends). Outside
     * any task and any such scope it does nothing.
     *
     * @throws Cancelled if the current task's cancellation is in effect
     */
    static void checkpoint() {
        Task<?> task = Context.currentTask();
        if (task != null) {
            task.throwIfCancelled();
        } else {
            CancelScope.throwIfPlainThreadCancelled(); // a scope the plain thread owns may stop it
        }
    }

    /**
     * A suspend point that lets other tasks run: throws {@link Cancelled} if the current task's
     * cancellation is in effect, else steps aside and comes back. On FiberIo the fiber goes to the
     * back of its worker's queue (other ready tasks run first); on an inline Io, whose other tasks
     * have already run, it fires the timers that are due. Then it checks for cancellation again.
     *
     * @throws Cancelled if the current task's cancellation is in effect, before or after stepping aside
     */
    static void yield() {
        checkpoint();
        if (Thread.currentThread().isVirtual()) {
            Io io = Context.currentIo();
            SideThreads world = io != null ? SideThreads.of(io) : null;
            if (world != null) {
                world.yielding(io); // a thread taking turns in an inline Io's world hands its turn on
            }
            Thread.yield(); // a fiber (or any virtual thread): its scheduler queues it behind the others
        } else {
            Io io = current();
            io.poll(io.nowMs()); // a deadline of now: fires what is due, never waits
        }
        checkpoint();
    }

    /**
     * Starts {@code body} as a detached task (as {@link #async} does) whose future nobody holds:
     * fire and forget. A failure is never silent: an exception the body throws (other than its
     * own cancellation; a {@link Cancelled} from elsewhere, such as an await of a cancelled
     * future, is reported too) goes to the task's Io's {@linkplain #uncaughtExceptionHandler() handler}
     * if it has one, else to the uncaught-exception handler of the thread that ran it (by default
     * the JVM's default handler, which prints it). As with threads, an exception the handler
     * itself throws is ignored.
     *
     * {@snippet :
     * Io io = FiberIo.builder().uncaughtExceptionHandler((thread, e) -> log.error("lost", e)).build();
     * Io.with(io).run(() -> Io.launch(() -> audit.write(event)));   // a failure is logged
     * }
     *
     * @param body the task's body
     * @throws NullPointerException if {@code body} is null
     */
    static void launch(Runnable body) {
        Objects.requireNonNull(body, "body");
        async(() -> {
            try {
                body.run();
            } catch (Throwable failure) { // a checked one thrown sneakily too: nobody else would see it
                Task<?> me = Context.currentTask();
                if (failure instanceof Cancelled
                        && me != null
                        && (me.isCancelRequested() || me.isCancellationEffective())) {
                    // its own cancellation, or that of a scope it runs inside (inline): nothing failed
                    return null;
                }
                // anything else, a Cancelled too (an await of a cancelled future, a race lost to one)
                Thread self = Thread.currentThread();
                Thread.UncaughtExceptionHandler handler = current().uncaughtExceptionHandler();
                try {
                    (handler != null ? handler : self.getUncaughtExceptionHandler()).uncaughtException(self, failure);
                } catch (RuntimeException | Error ignored) {
                    // as the JVM does for a thread's handler: a throwing handler is ignored
                }
            }
            return null;
        });
    }

    /**
     * Runs {@code body}, code that blocks its thread (blocking file I/O, a JDBC call, a lock held
     * by native code, a long CPU-bound library call), where its blocking harms nobody, and returns
     * its value. On a scheduling Io ({@code FiberIo}) the body runs on a thread of an elastic pool
     * beside the workers while the calling task suspends, so the workers go on running other
     * tasks; on an inline Io ({@code BlockingIo}), and from a plain thread, it runs right here.
     *
     * <ul>
     *   <li>The body's value is returned; an unchecked failure is rethrown as the same instance, a
     *       checked one wrapped in {@link java.util.concurrent.CompletionException}, as
     *       {@link Future#await()} does.
     *   <li>Cancellation takes effect at the boundary: a cancelled caller stops waiting at once
     *       and throws {@link Cancelled}; the body's thread is interrupted (an interruptible
     *       call ends early) and its value, if it still returns one, is dropped. The caller does
     *       not wait for the body to end.
     *   <li>The body runs on a plain thread outside the Io: nothing is installed there, so it
     *       should block, not spawn tasks.
     * </ul>
     *
     * {@snippet :
     * byte[] bytes = Io.blocking(() -> Files.readAllBytes(path));   // the worker stays free
     * }
     *
     * @param body the blocking code
     * @param <T> the value's type
     * @return what {@code body} returns
     * @throws Cancelled if the calling task is cancelled while the body runs
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of {@code body}
     * @throws NullPointerException if {@code body} is null
     */
    static <T> T blocking(Callable<T> body) {
        Objects.requireNonNull(body, "body");
        return current().callBlocking(body);
    }

    /**
     * The Io's half of {@link #blocking}: runs {@code body}, which may block its thread. The
     * default runs it on the calling thread, right for an inline Io; a scheduling Io runs it off
     * its workers while the calling task suspends.
     *
     * <p>The default is a suspend point at both ends, as a scheduling Io's wait is: a caller
     * whose cancellation is in effect starts nothing, and once the body has ended (its blocking
     * call interrupted by the caller's cancel, or not) a caller cancelled meanwhile throws
     * {@link Cancelled} instead of the body's value or exception (an Error still comes out as
     * it is).
     *
     * @param body the blocking code
     * @param <T> the value's type
     * @return what {@code body} returns
     */
    default <T> T callBlocking(Callable<T> body) {
        checkpoint(); // a cancelled caller starts nothing
        T value;
        try {
            value = body.call();
        } catch (RuntimeException e) {
            checkpoint(); // cancelled meanwhile: Cancelled, as a scheduling Io's caller gets
            throw e;
        } catch (Exception e) {
            checkpoint(); // the caller's cancel interrupted the body: Cancelled, not the interrupt wrapped
            throw new CompletionException(e);
        }
        checkpoint(); // cancelled meanwhile: the value is dropped, as a scheduling Io drops it
        return value;
    }

    /**
     * Returns where this Io reports failures that no caller can observe: those of detached tasks
     * ({@link #launch}). Null (the default) means the uncaught-exception handler of the thread
     * that ran the task. Implementations let it be configured when the Io is built.
     *
     * @return the handler, or null for the running thread's own
     */
    default Thread.UncaughtExceptionHandler uncaughtExceptionHandler() {
        return null;
    }

    /**
     * Runs {@code body} with cancellation of the current task deferred: suspend points inside it
     * do not throw {@link Cancelled}, and a cancellation requested meanwhile takes effect at the
     * first suspend point after the outermost shield exits. Shields nest (depth-counted). An
     * exception thrown inside a shield propagates as it is, never replaced by {@code Cancelled}.
     * A shield also defers a structured scope's cancellation of its owner, if the scope was opened
     * outside the shield. Outside any task (and any scope the thread owns) this simply runs
     * {@code body}.
     *
     * @param body the code to protect from cancellation
     * @param <T> the value's type
     * @return what {@code body} returns
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of {@code body}
     * @throws NullPointerException if {@code body} is null
     */
    static <T> T shield(Callable<T> body) {
        Objects.requireNonNull(body, "body");
        Task<?> task = Context.currentTask();
        if (task == null) {
            return CancelScope.plainThreadShield(body); // defers the scopes a plain thread owns
        }
        task.enterShield();
        try {
            return Unchecked.call(body);
        } finally {
            task.exitShield();
        }
    }

    /**
     * Runs {@code body} with cancellation deferred; see {@link #shield(Callable)}.
     *
     * @param body the code to protect from cancellation
     * @throws NullPointerException if {@code body} is null
     */
    static void shield(Runnable body) {
        Objects.requireNonNull(body, "body");
        shield(() -> {
            body.run();
            return null;
        });
    }

    /**
     * Returns the future of the task running this code, or empty on a plain thread outside any
     * task. Lets a task hand out its own handle (for example, to be cancelled by someone else).
     *
     * @return the current task's future, if any
     */
    static Optional<Future<?>> currentTask() {
        return Optional.ofNullable(Context.currentTask());
    }

    /**
     * Code to run with one Io installed, made by {@link Io#with(Io)}. Immutable and thread-safe;
     * each call installs the Io only for its own duration (and in the tasks spawned meanwhile).
     *
     * <p>Where the body runs depends on the Io (DESIGN §3.7). An inline Io ({@code BlockingIo})
     * runs it on the calling thread. A scheduling Io ({@code FiberIo}) runs it as a <em>root
     * task</em> and the caller waits for it, unless the caller is already one of that Io's tasks
     * (then it runs inline): a virtual clock then counts it, and one worker makes the run
     * deterministic. A root task runs on another thread, so it does not see the caller's
     * {@code ThreadLocal} values, and a lock or monitor the caller holds is held by another
     * thread as far as the body is concerned (taking it there deadlocks). A caller that stops
     * waiting (interrupted, or its own task cancelled) gets {@link Cancelled}, after the root task
     * was cancelled and has unwound. A closed FiberIo cannot be entered: {@code IllegalStateException}.
     */
    final class Binding {
        private final Io io;

        private Binding(Io io) {
            this.io = io;
        }

        /**
         * Runs {@code body} with this binding's Io installed.
         *
         * @param body the code to run
         * @throws NullPointerException if {@code body} is null
         */
        public void run(Runnable body) {
            Objects.requireNonNull(body, "body");
            RootTasks.call(io, () -> {
                body.run();
                return null;
            });
        }

        /**
         * Calls {@code body} with this binding's Io installed and returns its value.
         *
         * @param body the code to call
         * @param <T> the value's type
         * @return what {@code body} returns
         * @throws java.util.concurrent.CompletionException wrapping a checked exception of
         *     {@code body}; unchecked exceptions propagate as they are
         * @throws NullPointerException if {@code body} is null
         */
        public <T> T call(Callable<T> body) {
            Objects.requireNonNull(body, "body");
            return RootTasks.call(io, body);
        }

        /**
         * Returns the Io this binding installs.
         *
         * @return the bound Io
         */
        public Io io() {
            return io;
        }
    }
}
