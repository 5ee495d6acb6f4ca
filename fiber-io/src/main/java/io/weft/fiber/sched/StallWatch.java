package io.weft.fiber.sched;

import io.weft.internal.ParkClock;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.locks.LockSupport;

/**
 * Finds workers whose carrier stays inside one task (blocking file I/O, a pinned wait, a long
 * computation) while work waits behind it, and starts a spare worker to run that work. One
 * platform thread per scheduler with a real clock; it never writes a worker's owner-only state
 * (it reads one, the idle runner pool, racily: below).
 */
final class StallWatch implements Runnable {
    /*
     * Implementation notes.
     *
     * A worker counts a poll after every task it runs and an end for every task that ends on it,
     * run in place by an awaiter too (Worker.progress: two counters kept anyway, for metrics and
     * live tasks). Every half threshold the watch reads each active worker's progress: a worker
     * that is not parked and whose progress has not moved for a whole threshold is inside one
     * task. If that worker has work queued (its queue or LIFO slot) that nobody took any of for a
     * threshold either (Worker.queueMark: the queue's head word and the slot's occupant; a task
     * that runs long while others steal what it spawns is not a stall), or every active worker
     * is stuck so and the shared queue holds work or a timer is due (nobody would fire it), and
     * no worker is parked (a parked worker would be woken for the work the usual way), the watch
     * starts spares: one per task waiting there plus one, at most MAX_SPARES_PER_LOOK (a spare
     * that takes a blocking task is stuck in turn, and each detection costs a threshold: with
     * one spare per look, StallTest's first probe waited 6.7-8.4 ms, now 1.5-3.4). "Inside one task" means blocked in the kernel: on Linux the watch reads the
     * still carrier's state from /proc (OsThreads; 'S' sleeping or 'D' disk, on two looks in a
     * row, since a safepoint puts every thread to sleep for a moment); elsewhere it reads the
     * carrier's CPU time (ThreadMXBean) and takes a carrier that used a quarter of the CPU or more
     * as computing. A running or preempted carrier ('R') is not a stall: spares for CPU-bound
     * tasks would oversubscribe the cores, and on a busy machine preemption looked like a stall,
     * extra carriers made more preemption and more spares (measured: about 500 spares and 40%
     * fewer spawn_many_local rounds in 5 s with only the progress check; 1 to 3 spares with the
     * kernel's state). (Scheduler.activateSpare): a worker like the
     * others, counted in IdleWorkers, that first steals from the stuck worker and then takes
     * part in everything (stealing, the shared queue, timers, being woken), and retires after
     * SPARE_LINGER idle. This is Go's hand-off of a processor whose thread blocks, made without
     * touching the stuck worker: it is inside a task, its queue is stolen the usual way, and when
     * the task returns it goes on as before (for a while there are more carriers than configured).
     *
     * At most one spare per task waiting behind the stuck worker (or in the shared queue) per look,
     * and at most MAX_SPARES_PER_LOOK; a stuck worker that got spares is timed again from that
     * look, so it gets more only if work is still queued behind it, untouched, a threshold later. At most 64 carriers in all (IdleWorkers' bitmap); past that, stuck
     * workers stay stuck, as before.
     *
     * A worker is timed from the first look that sees it active (a new spare, or a configured
     * worker at start), never from an earlier one. A look that comes over twice its period late
     * (the watch was held up: a GC pause, an oversubscribed machine, which held the workers too)
     * only restarts every timing: unmoved counts say nothing then.
     *
     * Cost: no work on the workers' paths beyond the poll counter that metrics keep anyway; the
     * watch wakes every half threshold (1 ms by default) and reads a few fields per worker (and
     * takes IdleWorkers' lock once per worker, to read its parked bit), plus its idle pool's 32
     * slots and two fields of each pooled runner's thread (below).
     * Virtual clocks get no watch: their runs must not depend on real time.
     *
     * A worker whose carrier is held by one of its own idle runners, parked on the carrier
     * because its park could not unmount (out of memory: Runner's notes, "Parked on the
     * carrier"), has its runner unparked (Scheduler.wakeRunnersParkedOnCarriers, first on every
     * pass of the watch, held up or not: a read of each worker's 32 pool slots and of each pooled
     * runner's state), which leaves the pool and ends, and the worker goes on. Without it the
     * worker stood still for good, since only it would assign that runner a job. That step
     * allocates nothing (Carriers.parkedOnCarrier), so it works with the heap full, where the
     * rest of a look throws (reading /proc) on every pass. A first version woke only the runners
     * of workers whose progress had not moved since the look before, which such a throwing look
     * never recorded.
     *
     * Each look also times the JDK's socket sub-pollers this scheduler hosts, and hands a run of
     * one that sat queued for a threshold to the default scheduler (Scheduler.lookAtPollers,
     * HostedPoller): a scheduler hosts them only while a watch runs.
     *
     * Park clock: a watch whose period is at most ParkClock.KEEPER_PERIOD_NANOS (the default 2 ms
     * threshold looks every 1 ms) also keeps ParkClock's tick fresh, one write per look when the
     * tick changed, so a fiber's park stamps its token without reading the clock. It registers
     * before its first look and releases when it ends, whatever ends it.
     */

    /** How long the watch pauses after a look failed for want of memory. */
    private static final long OUT_OF_MEMORY_PAUSE_NANOS = 100_000_000L;

    private final Scheduler scheduler;
    private final long thresholdNanos;
    private final long[] lastPolls = new long[64];
    private final long[] stillSince = new long[64];
    /** The queue mark of worker i at the last look, and since when its queued work sat untouched. */
    private final long[] lastMark = new long[64];

    private final long[] untouchedSince = new long[64];
    /** Whether slot i was active at the last look: a worker (newly) active is timed from now. */
    private final boolean[] seenActive = new boolean[64];

    private long lastLook;
    /** Carrier CPU time at the start of a still worker's second half-threshold, or -1; and when. */
    private final long[] cpuMark = new long[64];

    private final long[] cpuMarkAt = new long[64];
    /** Consecutive looks that found worker i's still carrier asleep in the kernel. */
    private final int[] sleepingLooks = new int[64];

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final boolean cpuTime = threads.isThreadCpuTimeSupported();

    StallWatch(Scheduler scheduler, long thresholdNanos) {
        this.scheduler = scheduler;
        this.thresholdNanos = thresholdNanos;
        java.util.Arrays.fill(cpuMark, -1);
        if (cpuTime && !threads.isThreadCpuTimeEnabled()) {
            threads.setThreadCpuTimeEnabled(true);
        }
    }

    @Override
    public void run() {
        long period = Math.max(100_000L, thresholdNanos / 2);
        lastLook = System.nanoTime();
        boolean keeper = period <= ParkClock.KEEPER_PERIOD_NANOS; // see the notes, "Park clock"
        if (keeper) {
            ParkClock.keep(lastLook);
        }
        try {
            watch(period, keeper);
        } finally {
            if (keeper) {
                ParkClock.release();
            }
        }
    }

    private void watch(long period, boolean keeper) {
        while (!scheduler.isStopped()) {
            LockSupport.parkNanos(this, period);
            long now = System.nanoTime();
            try {
                if (keeper) {
                    ParkClock.tick(now);
                }
                scheduler.wakeRunnersParkedOnCarriers(); // first, and on every pass: see the notes
                if (now - lastLook > 2 * period) {
                    // The watch itself was held up (a GC pause, an oversubscribed machine): the
                    // workers were too, so unmoved counts say nothing. Time everyone from now.
                    forgetTimings(now);
                    // not the pollers' timings: a held-up watch means busy workers, when a rescue matters most
                    scheduler.lookAtPollers(now, thresholdNanos, false);
                } else {
                    look(now);
                }
            } catch (Throwable t) {
                Scheduler.reportUncaught(t); // the watch must not end (an OutOfMemoryError included)
                if (t instanceof OutOfMemoryError) {
                    // Give the heap a rest: every look would fail again and force another collection.
                    // Then time everyone from here (a worker whose turns fail pauses too, and must
                    // not be taken for a stalled one), ParkClock's tick included (stale meanwhile).
                    LockSupport.parkNanos(this, OUT_OF_MEMORY_PAUSE_NANOS);
                    lastLook = System.nanoTime();
                    forgetTimings(lastLook);
                    continue;
                }
            }
            lastLook = now;
        }
    }

    /** One look at every active worker; starts at most MAX_SPARES_PER_LOOK spares. */
    void look(long now) {
        Worker[] workers = scheduler.workers;
        long stuckWithWork = 0; // bit i: worker i is stuck with untouched work behind it
        int active = 0;
        int stuck = 0;
        boolean anyParked = false;
        for (int i = 0, n = scheduler.extent(); i < n; i++) {
            Worker worker = workers[i];
            if (!worker.active) {
                seenActive[i] = false;
                continue;
            }
            active++;
            long polls = worker.progress();
            long mark = worker.queueMark();
            boolean queued = worker.hasQueuedWork();
            if (!seenActive[i]) { // first look since it became active: time it from now
                seenActive[i] = true;
                lastPolls[i] = polls;
                stillSince[i] = now;
                lastMark[i] = mark;
                untouchedSince[i] = now;
                cpuMark[i] = -1;
                continue;
            }
            if (mark != lastMark[i] || !queued) { // others are taking its work (or there is none)
                lastMark[i] = mark;
                untouchedSince[i] = now;
            }
            boolean parked = !scheduler.idle.isUnparked(i);
            anyParked |= parked;
            if (polls != lastPolls[i] || parked) {
                lastPolls[i] = polls;
                stillSince[i] = now;
                cpuMark[i] = -1;
                sleepingLooks[i] = 0;
                continue;
            }
            if (!blocked(worker, i, now)) {
                continue;
            }
            stuck++;
            if (queued && now - untouchedSince[i] >= thresholdNanos) {
                stuckWithWork |= 1L << i; // and nobody took any of the work behind it for a threshold either
            }
        }
        boolean starved = stuck == active && active > 0 && (!scheduler.injector.isEmpty() || scheduler.timerDue());
        scheduler.lookAtPollers(now, thresholdNanos, anyParked); // the JDK's sub-pollers (HostedPoller)
        // A parked worker means the queued work will be found the usual way: a worker parks only
        // after finding every queue empty, and a push wakes a parked worker when nobody searches.
        if (anyParked) {
            return;
        }
        int budget = MAX_SPARES_PER_LOOK;
        for (long left = stuckWithWork; left != 0 && budget > 0; left &= left - 1) {
            int w = Long.numberOfTrailingZeros(left);
            Worker stuckWorker = workers[w];
            // one spare per task waiting behind it, and one more for whatever comes next
            int wanted = Math.min(budget, stuckWorker.queue.size() + (stuckWorker.hasLifo() ? 1 : 0) + 1);
            for (int k = 0; k < wanted && scheduler.activateSpare(w); k++) {
                budget--; // it steals from the stuck worker first
            }
            stillSince[w] = now; // more spares for it only a threshold from now
            untouchedSince[w] = now;
        }
        if (stuckWithWork == 0 && starved) {
            // every worker is blocked and the shared queue waits (or a timer is due)
            int wanted = Math.min(budget, scheduler.injector.size() + 1);
            for (int k = 0; k < wanted && scheduler.activateSpare(-1); k++) {
                // started one
            }
            forgetTimings(now);
        }
    }

    /** At most this many spares start at one look. */
    static final int MAX_SPARES_PER_LOOK = 4;

    /**
     * Whether worker {@code i}, whose progress has not moved since stillSince, is blocked: still
     * for a whole threshold, and its carrier used under a quarter of the CPU over the second half
     * (blocked in the kernel or parked pinned, not computing, nor preempted by a busy OS, which
     * still gives it a share). Without per-thread CPU time, still for a threshold is enough.
     */
    private boolean blocked(Worker worker, int i, long now) {
        long still = now - stillSince[i];
        WorkerThread carrier = worker.carrier;
        if (carrier == null) {
            return false;
        }
        int tid = carrier.osTid;
        if (tid >= 0 && still >= thresholdNanos) {
            // The kernel knows: 'S' (sleeping: a read of a pipe, a socket, a park pinned to the
            // carrier) or 'D' (the disk) is blocked; 'R' is running, or runnable and preempted.
            // Two looks in a row: a safepoint (a GC, a deoptimization) also puts every carrier to
            // sleep in the kernel, for a moment.
            char state = OsThreads.state(tid);
            if (state != '?') {
                sleepingLooks[i] = state == 'S' || state == 'D' ? sleepingLooks[i] + 1 : 0;
                return sleepingLooks[i] >= 2;
            }
        }
        if (!cpuTime) {
            return still >= thresholdNanos;
        }
        if (still < thresholdNanos / 2) {
            return false;
        }
        if (cpuMark[i] < 0) {
            cpuMark[i] = Math.max(0, threads.getThreadCpuTime(carrier.threadId()));
            cpuMarkAt[i] = now;
            return false;
        }
        long window = now - cpuMarkAt[i];
        if (still < thresholdNanos || window < thresholdNanos / 2) {
            return false;
        }
        long used = threads.getThreadCpuTime(carrier.threadId()) - cpuMark[i];
        if (used >= window / 4) { // it computes: not a stall this watch hands on; look again later
            cpuMark[i] = -1;
            stillSince[i] = now;
            return false;
        }
        return true;
    }

    private void forgetTimings(long now) {
        for (int i = 0, n = scheduler.extent(); i < n; i++) {
            stillSince[i] = now;
            untouchedSince[i] = now;
            cpuMark[i] = -1;
        }
    }
}
