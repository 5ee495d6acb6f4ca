package io.weft.fiber.sched;

import io.weft.internal.Context;
import io.weft.internal.Task;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.concurrent.Executor;

/**
 * The JDK internals FiberIo needs, opened by {@code --add-opens java.base/java.lang}: the
 * virtual-thread builder that takes a scheduler, the current carrier thread, and what it takes to
 * send a virtual thread that is not a fiber back to the JDK's default scheduler. Thread-safe.
 */
public final class Carriers {
    /*
     * Implementation notes.
     *
     * java.lang.ThreadBuilders$VirtualThreadBuilder(Executor) builds virtual threads whose
     * continuation is submitted to the given Executor on start, on unpark and after a yield;
     * that Executor is Weft's scheduler. Thread.currentCarrierThread() tells, from inside a
     * fiber, which platform thread it is mounted on: that is how a spawn or wake-up from a fiber
     * finds its worker's LIFO slot. Both are package-private in java.lang, hence the flag.
     *
     * Virtual threads that are not fibers. A virtual thread built without a scheduler
     * (Thread.ofVirtual(), Executors.newVirtualThreadPerTaskExecutor(), StructuredTaskScope)
     * takes the scheduler of the virtual thread that constructs it. Inside a fiber that is Weft's
     * scheduler, so without a correction such threads would run on a FiberIo's workers, outside
     * its task registry, and be stranded when it closes; worse, the JDK starts its JVM-wide
     * socket pollers lazily as virtual threads from the first virtual thread that blocks on a
     * socket, and that may be a fiber (a closed FiberIo stalled every later socket read in the
     * JVM). The correction happens at the one moment such a thread reaches Weft before it has
     * run: its start, which submits its continuation to the scheduler it inherited.
     * Scheduler.execute asks foreignStart(continuation): the continuation is the thread's
     * VirtualThread::runContinuation method reference, whose only captured field is the thread; a
     * thread still in state STARTED is being started; and a fiber is started only by
     * Scheduler.startRunner, which names the thread in STARTING (a ThreadLocal of the starting
     * thread, set by markStarting as the thread is built) around its start, whose first
     * submission happens synchronously on that same thread. A
     * started thread that is not the one named there is foreign. (A marker on the thread itself,
     * such as its uncaught-exception handler, would be visible to user code, which could copy it
     * onto a thread of its own.) A foreign thread gets the JDK's default scheduler written into
     * its (final) scheduler field before its first run, and its first run is submitted there;
     * every later submission reads that field, so it goes to the default scheduler directly: the
     * thread is a default-scheduler virtual thread in every respect (file-I/O compensation
     * included) and never touches the FiberIo again. (The JDK's socket sub-pollers get a
     * HostedPoller instead, when the scheduler has a stall watch, and one on the default
     * scheduler may be adopted by a FiberIo later: see there, "Which FiberIo", for how that
     * write by the running thread itself is ordered.) The write happens-before the thread's first
     * run (the ForkJoinPool's submission orders it), and any thread that later submits it has
     * first read a state (PARKED, BLOCKED...) written after that run.
     *
     * Fibers after stop. The same move saves a fiber readied after its scheduler stopped (a task
     * close() cancelled that was still parked, or a runner fiber blocked on a monitor in its last
     * steps): Scheduler.afterStop writes the default scheduler into its field and submits the
     * continuation there, instead of throwing RejectedExecutionException at whoever readied it.
     * That readier is often a JDK thread: the one that unblocks virtual threads waiting for a
     * monitor ends on an exception, and every virtual thread in the JVM that blocks on a
     * contended monitor then waits forever (seen: a weft-producer thread of an unrelated test).
     * The thread is not running at that point (it is being submitted after a state change only
     * a readier makes), so the write happens-before its next run as at a start; when the JDK
     * submits the same thread twice (a stack-trace request resubmits a readied thread), both
     * submissions write the same value, and the extra run finds nothing to do. The moved fiber's
     * code runs to its end, except, on a virtual clock, a wait on the stopped scheduler's own
     * timers (a shielded Io.sleep in a finally block), which nothing fires any more: that one stays
     * parked, as every readied fiber did before (a real clock's are fired after stop: Scheduler,
     * "Timers after stop"). resumption(continuation) tells such a submission from a
     * start (state not STARTED).
     *
     * The cost on Scheduler.execute's path: a class comparison, one field load and a volatile
     * int load; a fiber's start adds a ThreadLocal write, read and clear. Writing a final field
     * through reflection is allowed on JDK 25 for a non-static field of a normal class once
     * setAccessible succeeded (the flag opens java.lang); the static check below performs that
     * write once, on a probe thread, so a JDK that forbids it fails when the first FiberIo is
     * built, not in the middle of some thread's start.
     *
     * Checked once, when the first FiberIo is built: without the flag (or on a JDK whose
     * internals differ) the constructor fails with an IllegalStateException that names the flag,
     * instead of an obscure reflection error later.
     */

    /** The flag, as users pass it on the class path. */
    public static final String ADD_OPENS_FLAG = "--add-opens java.base/java.lang=ALL-UNNAMED";

    private static final MethodHandle CURRENT_CARRIER;
    private static final Constructor<?> BUILDER;
    /** The class of VirtualThread::runContinuation, the Runnable a virtual thread submits. */
    private static final Class<?> CONTINUATION_CLASS;
    /** The thread captured by a runContinuation method reference. */
    private static final VarHandle CONTINUATION_THREAD;
    /** VirtualThread.runContinuation: the Runnable a virtual thread submits, from the thread. */
    private static final VarHandle RUN_CONTINUATION;
    /** VirtualThread.state, and the value it has between start() and the first run. */
    private static final VarHandle STATE;

    private static final int STARTED;
    /** VirtualThread.scheduler (final; written for a foreign thread before it runs, and for a fiber readied after stop). */
    private static final Field SCHEDULER;
    /** The same field, for reads (a VarHandle on a final field reads only). */
    private static final VarHandle SCHEDULER_READ;

    private static final Executor DEFAULT_SCHEDULER;
    /** VirtualThread.disableSuspendAndPreempt / enableSuspendAndPreempt: pin and unpin the current thread. */
    private static final MethodHandle PIN;

    private static final MethodHandle UNPIN;
    /** Thread.threadLocals, Thread.inheritableThreadLocals, Thread.uncaughtExceptionHandler. */
    private static final VarHandle THREAD_LOCALS;

    private static final VarHandle INHERITABLE_THREAD_LOCALS;
    private static final VarHandle HANDLER;
    /** VirtualThread.onWaitingList / blockPermit: a monitor's release is on its way to a blocked thread. */
    private static final VarHandle ON_WAITING_LIST;

    private static final VarHandle BLOCK_PERMIT;
    /** VirtualThread's unmounted-but-runnable states, its BLOCKED state, and the SUSPENDED bit. */
    private static final int[] RUNNABLE_UNMOUNTED;

    private static final int BLOCKED;
    private static final int SUSPENDED;
    /** VirtualThread's states for a park on the carrier (it could not unmount), and its carrierThread. */
    private static final int PINNED;

    private static final int TIMED_PINNED;
    private static final VarHandle CARRIER_THREAD;
    private static final RuntimeException UNAVAILABLE;

    static {
        MethodHandle carrier = null;
        Constructor<?> builder = null;
        Class<?> continuationClass = null;
        VarHandle continuationThread = null;
        VarHandle runContinuation = null;
        VarHandle state = null;
        int started = -1;
        Field scheduler = null;
        VarHandle schedulerRead = null;
        Executor defaultScheduler = null;
        MethodHandle pin = null;
        MethodHandle unpin = null;
        VarHandle threadLocals = null;
        VarHandle inheritableThreadLocals = null;
        VarHandle handler = null;
        VarHandle onWaitingList = null;
        VarHandle blockPermit = null;
        int[] runnableUnmounted = new int[0];
        int blocked = -1;
        int suspended = 0;
        int pinned = -1;
        int timedPinned = -1;
        VarHandle carrierThread = null;
        RuntimeException problem = null;
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(Thread.class, MethodHandles.lookup());
            carrier = lookup.findStatic(Thread.class, "currentCarrierThread", MethodType.methodType(Thread.class));
            builder = Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder")
                    .getDeclaredConstructor(Executor.class);
            builder.setAccessible(true);

            Class<?> virtualThread = Class.forName("java.lang.VirtualThread");
            MethodHandles.Lookup vt = MethodHandles.privateLookupIn(virtualThread, MethodHandles.lookup());
            state = vt.findVarHandle(virtualThread, "state", int.class);
            started = (int)
                    vt.findStaticVarHandle(virtualThread, "STARTED", int.class).get();
            defaultScheduler =
                    (Executor) vt.findStatic(virtualThread, "defaultScheduler", MethodType.methodType(Executor.class))
                            .invoke();
            MethodType toVoid = MethodType.methodType(void.class, Thread.class);
            pin = vt.findVirtual(virtualThread, "disableSuspendAndPreempt", MethodType.methodType(void.class))
                    .asType(toVoid);
            unpin = vt.findVirtual(virtualThread, "enableSuspendAndPreempt", MethodType.methodType(void.class))
                    .asType(toVoid);
            Class<?> map = Class.forName("java.lang.ThreadLocal$ThreadLocalMap");
            threadLocals = lookup.findVarHandle(Thread.class, "threadLocals", map);
            inheritableThreadLocals = lookup.findVarHandle(Thread.class, "inheritableThreadLocals", map);
            handler = lookup.findVarHandle(
                    Thread.class, "uncaughtExceptionHandler", Thread.UncaughtExceptionHandler.class);
            scheduler = virtualThread.getDeclaredField("scheduler");
            scheduler.setAccessible(true);
            schedulerRead = vt.findVarHandle(virtualThread, "scheduler", Executor.class);
            onWaitingList = vt.findVarHandle(virtualThread, "onWaitingList", boolean.class);
            blockPermit = vt.findVarHandle(virtualThread, "blockPermit", boolean.class);
            runnableUnmounted = new int[] {
                (int) vt.findStaticVarHandle(virtualThread, "STARTED", int.class)
                        .get(),
                (int) vt.findStaticVarHandle(virtualThread, "UNPARKED", int.class)
                        .get(),
                (int) vt.findStaticVarHandle(virtualThread, "YIELDED", int.class)
                        .get(),
                (int) vt.findStaticVarHandle(virtualThread, "UNBLOCKED", int.class)
                        .get(),
            };
            blocked = (int)
                    vt.findStaticVarHandle(virtualThread, "BLOCKED", int.class).get();
            suspended = (int) vt.findStaticVarHandle(virtualThread, "SUSPENDED", int.class)
                    .get();
            pinned = (int)
                    vt.findStaticVarHandle(virtualThread, "PINNED", int.class).get();
            timedPinned = (int) vt.findStaticVarHandle(virtualThread, "TIMED_PINNED", int.class)
                    .get();
            carrierThread = vt.findVarHandle(virtualThread, "carrierThread", Thread.class);
            // A thread that is never started: to find the shape of its continuation, and to check
            // that its scheduler field can be written (what moveToDefaultScheduler does).
            Thread probe = Thread.ofVirtual().unstarted(() -> {});
            try {
                scheduler.set(probe, defaultScheduler);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(
                        "this JDK does not let FiberIo write VirtualThread.scheduler, which it"
                                + " needs to hand virtual threads that are not fibers back to the default scheduler",
                        e);
            }
            runContinuation = vt.findVarHandle(virtualThread, "runContinuation", Runnable.class);
            Runnable continuation = (Runnable) runContinuation.get(probe);
            continuationClass = continuation.getClass();
            Field captured = null;
            for (Field field : continuationClass.getDeclaredFields()) {
                if (field.getType() == virtualThread) {
                    captured = field;
                }
            }
            if (captured == null) {
                throw new IllegalStateException("VirtualThread.runContinuation does not capture its thread");
            }
            continuationThread = MethodHandles.privateLookupIn(continuationClass, MethodHandles.lookup())
                    .findVarHandle(continuationClass, captured.getName(), virtualThread);
            if ((Thread) continuationThread.get(continuation) != probe) {
                throw new IllegalStateException("VirtualThread.runContinuation does not capture its own thread");
            }
        } catch (Throwable e) {
            String module = Carriers.class.getModule().isNamed()
                    ? Carriers.class.getModule().getName()
                    : "ALL-UNNAMED";
            boolean denied =
                    e instanceof IllegalAccessException || e instanceof java.lang.reflect.InaccessibleObjectException;
            problem = new IllegalStateException(
                    "FiberIo needs the JVM flag --add-opens java.base/java.lang=" + module
                            + " (it runs fibers as virtual threads on its own scheduler, through a JDK constructor that is not"
                            + " public); add it to the java command line, Surefire's argLine or the jar manifest (Add-Opens)"
                            + (denied
                                    ? ""
                                    : ". With the flag given, this JDK's virtual-thread internals differ from JDK 25's: "
                                            + e),
                    e);
        }
        CURRENT_CARRIER = carrier;
        BUILDER = builder;
        CONTINUATION_CLASS = continuationClass;
        CONTINUATION_THREAD = continuationThread;
        RUN_CONTINUATION = runContinuation;
        STATE = state;
        STARTED = started;
        SCHEDULER = scheduler;
        SCHEDULER_READ = schedulerRead;
        DEFAULT_SCHEDULER = defaultScheduler;
        PIN = pin;
        UNPIN = unpin;
        THREAD_LOCALS = threadLocals;
        INHERITABLE_THREAD_LOCALS = inheritableThreadLocals;
        HANDLER = handler;
        ON_WAITING_LIST = onWaitingList;
        BLOCK_PERMIT = blockPermit;
        RUNNABLE_UNMOUNTED = runnableUnmounted;
        BLOCKED = blocked;
        SUSPENDED = suspended;
        PINNED = pinned;
        TIMED_PINNED = timedPinned;
        CARRIER_THREAD = carrierThread;
        UNAVAILABLE = problem;
        if (problem == null) {
            // Links parkedOnCarrier's VarHandle call sites now: their first use allocates, and the
            // stall watch and stop() call it when the heap may be full
            parkedOnCarrier(Thread.ofVirtual().unstarted(() -> {}), null);
        }
    }

    private Carriers() {}

    /** Throws the fail-fast error if the JDK internals are not reachable. */
    public static void checkAvailable() {
        if (UNAVAILABLE != null) {
            throw UNAVAILABLE;
        }
    }

    /** {@link #wayBack}: the fiber is runnable and not queued yet. */
    static final int ON_ITS_WAY_BACK = 2;
    /** {@link #wayBack}: the fiber is blocked on a monitor, with no sign yet that its release is on its way. */
    static final int BLOCKED_ON_MONITOR = 1;
    /** {@link #wayBack}: neither (running, parked, waiting, done). */
    static final int NOT_ON_ITS_WAY = 0;

    /**
     * Where the virtual thread {@code fiber} (not mounted: no worker runs it) stands with respect
     * to coming back to its scheduler: {@link #ON_ITS_WAY_BACK} if it is started, unparked,
     * yielded or unblocked and not yet run, or blocked on a monitor whose release the JDK's
     * unblocker thread is delivering (on its waiting list, or holding a block permit);
     * {@link #BLOCKED_ON_MONITOR} if it is blocked on a monitor without either sign (the monitor
     * is held, or the unblocker is between taking it off its list and granting the permit: the
     * JDK shows no difference); else {@link #NOT_ON_ITS_WAY}.
     */
    static int wayBack(Thread fiber) {
        int state = (int) STATE.getVolatile(fiber) & ~SUSPENDED;
        for (int runnable : RUNNABLE_UNMOUNTED) {
            if (state == runnable) {
                return ON_ITS_WAY_BACK;
            }
        }
        if (state != BLOCKED) {
            return NOT_ON_ITS_WAY;
        }
        boolean releasing = (boolean) ON_WAITING_LIST.getVolatile(fiber) || (boolean) BLOCK_PERMIT.getVolatile(fiber);
        return releasing ? ON_ITS_WAY_BACK : BLOCKED_ON_MONITOR;
    }

    /**
     * Whether the virtual thread {@code fiber} is parked on {@code carrier} itself: its park could
     * not unmount it (it was pinned, or the JDK had no memory for its stack), so the carrier waits
     * in the kernel until the fiber is unparked. An unpark of such a fiber allocates nothing: the
     * JDK unparks the carrier (if it is still so parked when the unpark comes: one woken and parked
     * again unmounted meanwhile is resubmitted, which may allocate). Allocates nothing.
     */
    static boolean parkedOnCarrier(Thread fiber, Thread carrier) {
        // Both reads always: the first call (this class's initializer) links both call sites, so
        // no later call allocates; one made first with the heap full would throw OutOfMemoryError
        int state = (int) STATE.getVolatile(fiber) & ~SUSPENDED;
        Thread mountedOn = (Thread) CARRIER_THREAD.getVolatile(fiber);
        return (state == PINNED || state == TIMED_PINNED) && mountedOn == carrier;
    }

    /** Returns a virtual-thread builder whose threads are scheduled by {@code scheduler}. */
    static Thread.Builder.OfVirtual virtualThreadBuilder(Executor scheduler) {
        checkAvailable();
        try {
            return (Thread.Builder.OfVirtual) BUILDER.newInstance(scheduler);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("could not create a virtual-thread builder", e);
        }
    }

    /** Returns the platform thread the current thread runs on (itself, for a platform thread). */
    static Thread currentCarrier() {
        try {
            return (Thread) CURRENT_CARRIER.invokeExact();
        } catch (Throwable e) {
            throw new IllegalStateException("Thread.currentCarrierThread failed", e);
        }
    }

    /** The fiber the calling thread is starting (Scheduler.startRunner), else null. */
    private static final ThreadLocal<Thread> STARTING = new ThreadLocal<>();

    /**
     * Marks {@code fiber}, a thread of a FiberIo's builder about to be started on this thread, as
     * a fiber for {@link #foreignStart} (its start submits its first run synchronously, on this
     * thread); {@link #clearStarting} ends the mark.
     */
    static void markStarting(Thread fiber) {
        STARTING.set(fiber);
    }

    /** Ends {@link #markStarting}. */
    static void clearStarting() {
        STARTING.set(null);
    }

    /**
     * If {@code continuation} is the first submission of a virtual thread that is not a fiber
     * (not being started by Scheduler.startRunner on this thread), returns that thread; else null.
     */
    static Thread foreignStart(Runnable continuation) {
        Thread thread = threadOf(continuation);
        if (thread == null) {
            return null; // not a virtual thread's continuation (a scheduler test's plain Runnable)
        }
        if ((int) STATE.getVolatile(thread) != STARTED || STARTING.get() == thread) {
            return null;
        }
        return thread;
    }

    /**
     * If {@code continuation} is the submission of a virtual thread that has run before (it is
     * being readied: an unpark, a monitor released, a timed park expiring), returns that thread;
     * else (a thread's start, a plain Runnable) null.
     */
    static Thread resumption(Runnable continuation) {
        Thread thread = threadOf(continuation);
        return thread != null && (int) STATE.getVolatile(thread) != STARTED ? thread : null;
    }

    /**
     * Makes {@code thread}, a virtual thread that is not running (not started yet, or readied
     * and being submitted), a thread of the JDK's default scheduler, and submits its next run
     * there. Every later submission reads the field, so the thread never comes back here.
     */
    static void moveToDefaultScheduler(Thread thread, Runnable continuation) {
        setScheduler(thread, DEFAULT_SCHEDULER);
        DEFAULT_SCHEDULER.execute(continuation);
    }

    /**
     * Writes {@code scheduler} into the virtual thread {@code thread}'s scheduler field: its next
     * submission (its first run, an unpark, a yield) goes there. Only for a thread that is not
     * running, or for the current thread itself; see the notes (and HostedPoller's, "Which
     * FiberIo", for the current thread) for when the write is ordered before the thread's next run.
     */
    static void setScheduler(Thread thread, Executor scheduler) {
        try {
            SCHEDULER.set(thread, scheduler);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("could not give " + thread + " the scheduler " + scheduler, e);
        }
    }

    /**
     * Returns the scheduler of the virtual thread whose continuation {@code continuation} is, or
     * null if it is not a virtual thread's continuation.
     */
    static Executor schedulerOf(Runnable continuation) {
        Thread thread = threadOf(continuation);
        return thread == null ? null : schedulerOfThread(thread);
    }

    /** Returns the scheduler of {@code thread}, a virtual thread (a volatile read of the field). */
    static Executor schedulerOfThread(Thread thread) {
        return (Executor) SCHEDULER_READ.getVolatile(thread);
    }

    /** Returns the JDK's default scheduler of virtual threads. */
    static Executor defaultScheduler() {
        return DEFAULT_SCHEDULER;
    }

    /** Returns the continuation that {@code thread}, a virtual thread, submits to its scheduler. */
    static Runnable continuationOf(Thread thread) {
        return (Runnable) RUN_CONTINUATION.get(thread);
    }

    /** Returns the virtual thread whose continuation {@code continuation} is, or null if it is not one. */
    static Thread threadOf(Runnable continuation) {
        return continuation.getClass() == CONTINUATION_CLASS ? (Thread) CONTINUATION_THREAD.get(continuation) : null;
    }

    /** Submits {@code continuation} to the JDK's default scheduler, its thread's field unchanged. */
    static void runOnDefaultScheduler(Runnable continuation) {
        DEFAULT_SCHEDULER.execute(continuation);
    }

    /**
     * Pins the current virtual thread to its carrier until {@link #unpin}: a lock it waits for
     * meanwhile blocks the carrier instead of unmounting the thread. Scheduler code that runs on a
     * fiber, touches its worker's owner-only state and may meet a lock on the way (the runner's
     * next-work lookup) runs pinned, so the fiber cannot resume on another worker half-way; code
     * that cannot unmount there goes without (Scheduler, "No pin on the owner's paths"). Nests.
     */
    static void pin(Thread virtual) {
        try {
            PIN.invokeExact(virtual);
        } catch (Throwable e) {
            throw new IllegalStateException("could not pin " + virtual, e);
        }
    }

    /** Ends one {@link #pin}. */
    static void unpin(Thread virtual) {
        try {
            UNPIN.invokeExact(virtual);
        } catch (Throwable e) {
            throw new IllegalStateException("could not unpin " + virtual, e);
        }
    }

    /**
     * Forgets every {@code ThreadLocal} and {@code InheritableThreadLocal} value of {@code thread}
     * (which must be the current thread) and restores its uncaught-exception handler: what a task
     * left behind, before the next task runs on the same fiber.
     */
    static void forgetThreadLocals(Thread thread, Thread.UncaughtExceptionHandler handler) {
        putBack(thread, null, null, handler);
    }

    /**
     * Gives {@code thread} (the current thread) these ThreadLocal maps and own handler, writing
     * each field only if it holds something else (a plain read is cheaper than a store).
     */
    private static void putBack(
            Thread thread, Object locals, Object inheritable, Thread.UncaughtExceptionHandler handler) {
        if (THREAD_LOCALS.get(thread) != locals) {
            THREAD_LOCALS.set(thread, locals);
        }
        if (INHERITABLE_THREAD_LOCALS.get(thread) != inheritable) {
            INHERITABLE_THREAD_LOCALS.set(thread, inheritable);
        }
        if (HANDLER.get(thread) != handler) {
            HANDLER.set(thread, handler);
        }
    }

    /** Returns the handler set on {@code thread} itself (null if none), not its group's. */
    static Thread.UncaughtExceptionHandler ownHandler(Thread thread) {
        return (Thread.UncaughtExceptionHandler) HANDLER.get(thread);
    }

    /**
     * Runs {@code task}, which {@code awaiter} (the task running on the calling thread) claimed, in
     * place (join helping), with the thread's per-thread state set aside meanwhile: the helped
     * task starts with no ThreadLocal values, shows its name (if it has one) after the thread's,
     * and runs with the awaiter's context class loader and own handler. After it, the thread gets
     * back the awaiter's ThreadLocal maps, name, context class loader and own handler, and
     * whatever the helped task left there is dropped. The interrupt status is Task.runHelped's to
     * set aside and give back (it is part of the cancel protocol: see CancelInterrupts' notes).
     * The saved state lives in this frame (no allocation but a named task's thread name), and each
     * part is written back only if the helped task changed it. {@code slot} is the awaiter's
     * context slot, handed on to Task.runHelped. Only on the awaiter's own thread.
     */
    public static void runInPlace(Task<?> task, Task<?> awaiter, Context.Slot slot) {
        Thread self = Thread.currentThread();
        Object locals = THREAD_LOCALS.get(self);
        Object inheritable = INHERITABLE_THREAD_LOCALS.get(self);
        String name = self.getName();
        ClassLoader loader = self.getContextClassLoader();
        Thread.UncaughtExceptionHandler handler = ownHandler(self);
        try { // everything the thread gets back is saved above: what follows may throw
            if (locals != null) {
                THREAD_LOCALS.set(self, null);
            }
            if (inheritable != null) {
                INHERITABLE_THREAD_LOCALS.set(self, null);
            }
            if (task.name() != null) { // a named task shows its name in thread dumps, here too
                self.setName(name + "/" + task.name());
            }
            task.runHelped(awaiter, slot);
        } finally {
            putBack(self, locals, inheritable, handler);
            if (self.getName() != name) {
                self.setName(name);
            }
            if (self.getContextClassLoader() != loader) {
                self.setContextClassLoader(loader);
            }
        }
    }
}
