package io.weft.fiber.sched;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;

/**
 * The scheduler of one of the JDK's socket sub-poller threads while a FiberIo runs it: each of
 * the thread's runs goes to that FiberIo's workers while it is open and responsive, else to the
 * JDK's default scheduler. Written into the thread's scheduler field before its first run
 * ({@link Scheduler#execute}), or by the thread itself when, on the default scheduler, it readies
 * one of the FiberIo's fibers ({@link Scheduler#dispatch}); the stall watch rescues a run that
 * waited too long ({@link Scheduler#lookAtPollers}).
 */
final class HostedPoller implements Executor {
    /*
     * Implementation notes.
     *
     * Why host them. The JDK polls sockets for virtual threads with a few "sub-poller" virtual
     * threads (sun.nio.ch.Poller, VTHREAD_POLLERS, the default on Linux): a platform master
     * poller unparks a sub-poller when its epoll set has events; the sub-poller polls without
     * blocking, unparks the virtual threads whose sockets are ready, and yields between polls
     * while events keep coming. They start lazily, from the first virtual thread that blocks on a
     * socket, and inherit its scheduler. On the default scheduler they share its carriers with
     * the threads they wake: a wake-up is a local push. Handed back to the default scheduler from
     * a FiberIo (as every foreign virtual thread is), they ran on two more carriers that competed
     * with the workers for the cores, and every wake-up of a fiber crossed from a ForkJoinPool
     * carrier to the FiberIo's shared queue and a parked worker: EchoServer.echo, 64
     * connections, measured 69,600 requests/s against virtual threads' 125,300; hosted, 116,600
     * (3 forks each, 2026-11-29).
     *
     * Why not own them outright. They are the JVM's pollers, not the FiberIo's: every virtual
     * thread's socket I/O waits on them. A FiberIo whose workers are all inside long computations
     * would stall every other virtual thread's I/O in the JVM, and a closed one would strand them
     * (the bug that made FiberIo hand them back). So each run is placed anew:
     *   - while the host is open and not evicted, a run goes to the host's workers (dispatch: from
     *     a worker, after a yield, to that worker's queue; from the master poller, a platform
     *     thread, to the shared queue, waking a parked worker);
     *   - after the host stopped, the thread moves to the default scheduler (its field
     *     rewritten); a run queued on the host when it stops goes there too (Scheduler.discard),
     *     and so does one that raced the stop (Scheduler.afterStop);
     *   - a run that sat queued on the host for a stall threshold is rescued: the stall watch
     *     submits the same continuation to the default scheduler and evicts the host's pollers
     *     (every run goes to the default scheduler) until a look finds a worker of the host
     *     parked, that is, idle. The copy left in the host's queue is harmless: a virtual
     *     thread's run starts with a compare-and-set from a runnable state to RUNNING, so of two
     *     submissions of one runnable period exactly one runs the thread, and the other finds it
     *     running (or parked again) and returns. The JDK relies on the same when a stack-trace
     *     request resubmits a readied thread.
     * Hosting needs the stall watch (a real clock and a positive stall threshold of at most
     * MAX_THRESHOLD_NANOS, 10 ms): with no watch nothing would rescue a queued run, and with a
     * longer threshold the rescue would come too late, so such a FiberIo hands the pollers back
     * as before.
     *
     * Which FiberIo. The one whose fiber started the pollers hosts them from their start. When
     * they run on the default scheduler (a plain virtual thread blocked on a socket first, or
     * their host closed and released them), the first FiberIo whose fiber one of them readies
     * adopts it: the sub-poller, in Scheduler.dispatch, writes a HostedPoller of that FiberIo
     * into its own scheduler field. Its current run goes on on its ForkJoinPool carrier; the
     * write is ordered before its next submission, by the master poller after it parks (its
     * park's state write comes after), or by itself after a yield. A yield with the carrier's
     * local queue empty goes back to that pool without reading the field, so adoption takes
     * effect at the thread's next park at the latest. A thread hosted by another FiberIo (its
     * field is that one's HostedPoller, evicted or not) is left alone: one host at a time, and
     * a FiberIo never takes pollers from another that is open. Each sub-poller is adopted on its
     * own, by the first fiber it readies (the write pollers only if a fiber's write blocks).
     *
     * Which threads: a foreign virtual thread whose start was submitted by Poller$Pollers.start
     * on this very thread (seen on the stack), and named "SubPoller-" (the stack walk runs only
     * for such names); for adoption, a virtual thread named "SubPoller-" on the default
     * scheduler with Poller.subPollerLoop on its stack. JDK coupling: the classes, the method and
     * the name are JDK 25's; on a JDK that differs, nothing is hosted or adopted, and the pollers
     * are handed back.
     *
     * hostedPollers (a copy-on-write list) is added to under the scheduler's monitor, the one
     * stop() holds to set `stopped` (Scheduler.host): a poller added before that is released by
     * stop(); after it, nothing is added.
     *
     * `sent` and `onHost` are written by whoever submits the thread (the master poller, a worker
     * after a yield; the watch clears `onHost` when it rescues a run, since a run on a
     * ForkJoinPool carrier yields back to the pool without passing through here); the watch
     * reads them.
     *
     * At stop, Scheduler.stop writes the default scheduler into every hosted thread at once and
     * forgets them: a stopped scheduler is not kept reachable by the JVM's pollers, and a run
     * still queued here is recognised at the drain by its thread's scheduler (isHostedOrReleased).
     *
     * Cost: per run of a sub-poller, two volatile reads, a volatile increment and a write; nothing
     * on a fiber's own path. Per foreign virtual-thread start, a name check; per fiber readied
     * by a virtual thread that is not one of the scheduler's fibers (the shared-queue path), a
     * name check, and for a sub-poller a volatile read of its scheduler field (the stack walk
     * only for one on the default scheduler, once, as it is adopted).
     */

    private static final VarHandle SENT;

    static {
        try {
            SENT = MethodHandles.lookup().findVarHandle(HostedPoller.class, "sent", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The longest stall threshold under which a scheduler hosts sub-pollers: a rescue comes one
     * to one and a half thresholds after a run was queued, and meanwhile every virtual thread's
     * socket I/O in the JVM may wait.
     */
    static final long MAX_THRESHOLD_NANOS = 10_000_000;

    /** The JDK's name prefix for its sub-poller threads. */
    private static final String NAME_PREFIX = "SubPoller-";
    /** The JDK class whose start method starts the sub-pollers. */
    private static final String STARTER = "sun.nio.ch.Poller$Pollers";
    /** The JDK class whose method a sub-poller runs for its whole life. */
    private static final String POLLER = "sun.nio.ch.Poller";
    /** That method. */
    private static final String LOOP = "subPollerLoop";

    final Scheduler host;
    final Thread thread;
    /** The thread's continuation (the same Runnable at every submission), for a rescue. */
    final Runnable continuation;

    /** Runs sent to the host so far. */
    @SuppressWarnings("unused") // through SENT
    private volatile long sent;
    /** Whether the last run went to the host (else to the default scheduler). */
    volatile boolean onHost;

    // Read and written by the stall watch only.
    /** `sent` when the watch last found the thread queued on the host, and since when (or -1). */
    long seenSent;

    long queuedSince = -1;

    HostedPoller(Scheduler host, Thread thread, Runnable continuation) {
        this.host = host;
        this.thread = thread;
        this.continuation = continuation;
    }

    /** Whether {@code thread}, a foreign virtual thread being started on this thread, is one of the JDK's sub-pollers. */
    static boolean isJdkSubPoller(Thread thread) {
        return thread.getName().startsWith(NAME_PREFIX) && onStack(STARTER, null);
    }

    /**
     * Whether the current thread, a virtual thread readying a fiber, is one of the JDK's
     * sub-pollers on the default scheduler, inside its polling loop: one a FiberIo may adopt.
     * The name is checked first (a field read); the scheduler and the stack only for that name.
     */
    static boolean isReleasedJdkSubPoller(Thread current) {
        return current.getName().startsWith(NAME_PREFIX)
                && Carriers.schedulerOfThread(current) == Carriers.defaultScheduler()
                && onStack(POLLER, LOOP);
    }

    /** Whether the current thread's stack has a frame of {@code className} (in {@code methodName}, unless null). */
    private static boolean onStack(String className, String methodName) {
        return StackWalker.getInstance()
                .walk(frames -> frames.anyMatch(frame -> frame.getClassName().equals(className)
                        && (methodName == null || frame.getMethodName().equals(methodName))));
    }

    /**
     * Whether {@code continuation} is a run of a sub-poller that a scheduler hosts, or hosted until
     * its stop released it to the default scheduler (a fiber's thread never has the default
     * scheduler while one of its runs is queued here): such a run, met at stop, goes to the
     * default scheduler, and is not counted as a fiber's.
     */
    static boolean isHostedOrReleased(Runnable continuation) {
        Executor scheduler = Carriers.schedulerOf(continuation);
        return scheduler instanceof HostedPoller || (scheduler != null && scheduler == Carriers.defaultScheduler());
    }

    /** Runs sent to the host so far. */
    long sent() {
        return (long) SENT.getVolatile(this);
    }

    @Override
    public void execute(Runnable task) {
        if (!host.isStopped() && !host.pollersEvicted()) {
            onHost = true;
            SENT.getAndAdd(this, 1L);
            host.dispatch(task); // a stop in between: dispatch hands it on (afterStop)
            return;
        }
        onHost = false;
        if (host.isStopped()) {
            Carriers.moveToDefaultScheduler(thread, task); // released: until a FiberIo adopts it
        } else {
            Carriers.runOnDefaultScheduler(task);
        }
    }

    @Override
    public String toString() {
        return "HostedPoller[" + thread.getName() + " on " + host + "]";
    }
}
