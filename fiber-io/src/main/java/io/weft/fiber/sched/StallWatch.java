package io.weft.fiber.sched;

import java.util.concurrent.locks.LockSupport;

/**
 * Finds workers whose carrier stays inside one task (blocking file I/O, a pinned wait, a long
 * computation) while work waits behind it, and starts a spare worker to run that work. One
 * platform thread per scheduler with a real clock; it never touches a worker's owner-only state.
 */
final class StallWatch implements Runnable {
    /*
     * Implementation notes.
     *
     * A worker counts a poll after every task it runs (Worker.polls, a plain increment). Every
     * half threshold the watch reads each active worker's count: a worker that is not parked and
     * whose count has not moved for a whole threshold is inside one task. If that worker has
     * work queued (its queue or LIFO slot), or every active worker is stuck so and the shared
     * queue holds work or a timer is due (nobody would fire it), the watch starts a spare (Scheduler.activateSpare): a worker like the
     * others, counted in IdleWorkers, that first steals from the stuck worker and then takes
     * part in everything (stealing, the shared queue, timers, being woken), and retires after
     * SPARE_LINGER idle. This is Go's hand-off of a processor whose thread blocks, made without
     * touching the stuck worker: it is inside a task, its queue is stolen the usual way, and when
     * the task returns it goes on as before (for a while there are more carriers than configured).
     *
     * At most one spare per look, and a stuck worker that got one is timed again from that look,
     * so a worker stuck for long gets another spare only if work is still queued behind it a
     * threshold later. At most 64 carriers in all (IdleWorkers' bitmap); past that, stuck
     * workers stay stuck, as before.
     *
     * A worker is timed from the first look that sees it active (a new spare, or a configured
     * worker at start), never from an earlier one. A look that comes much later than its period
     * (the watch was held up: a GC pause, an oversubscribed machine, which held the workers too)
     * only restarts every timing: unmoved counts say nothing then.
     *
     * Cost: no work on the workers' paths beyond the poll counter that metrics keep anyway; the
     * watch wakes every half threshold (1 ms by default) and reads a few fields per worker (and
     * takes IdleWorkers' lock once per worker, to read its parked bit).
     * Virtual clocks get no watch: their runs must not depend on real time.
     */

    private final Scheduler scheduler;
    private final long thresholdNanos;
    private final long[] lastPolls = new long[64];
    private final long[] stillSince = new long[64];
    /** Whether slot i was active at the last look: a worker (newly) active is timed from now. */
    private final boolean[] seenActive = new boolean[64];

    private long lastLook;

    StallWatch(Scheduler scheduler, long thresholdNanos) {
        this.scheduler = scheduler;
        this.thresholdNanos = thresholdNanos;
    }

    @Override
    public void run() {
        long period = Math.max(100_000L, thresholdNanos / 2);
        lastLook = System.nanoTime();
        while (!scheduler.isStopped()) {
            LockSupport.parkNanos(this, period);
            long now = System.nanoTime();
            try {
                if (now - lastLook > 4 * period) {
                    // The watch itself was held up (a GC pause, an oversubscribed machine): the
                    // workers were too, so unmoved counts say nothing. Time everyone from now.
                    forgetTimings(now);
                } else {
                    look(now);
                }
            } catch (RuntimeException | Error e) {
                Scheduler.reportUncaught(e); // the watch must not end silently
            }
            lastLook = now;
        }
    }

    /** One look at every active worker; starts at most one spare. */
    void look(long now) {
        Worker[] workers = scheduler.workers;
        int stuckWithWork = -1;
        int active = 0;
        int stuck = 0;
        for (int i = 0, n = scheduler.extent(); i < n; i++) {
            Worker worker = workers[i];
            if (!worker.active) {
                seenActive[i] = false;
                continue;
            }
            active++;
            long polls = worker.pollCount();
            if (!seenActive[i]) { // first look since it became active: time it from now
                seenActive[i] = true;
                lastPolls[i] = polls;
                stillSince[i] = now;
                continue;
            }
            if (polls != lastPolls[i] || !scheduler.idle.isUnparked(i)) {
                lastPolls[i] = polls;
                stillSince[i] = now;
                continue;
            }
            if (now - stillSince[i] < thresholdNanos) {
                continue;
            }
            stuck++;
            if (stuckWithWork < 0 && worker.hasQueuedWork()) {
                stuckWithWork = i;
            }
        }
        boolean starved = stuck == active && active > 0 && (!scheduler.injector.isEmpty() || scheduler.timerDue());
        if ((stuckWithWork >= 0 || starved) && scheduler.activateSpare(stuckWithWork)) {
            if (stuckWithWork >= 0) {
                stillSince[stuckWithWork] = now; // another spare for it only a threshold from now
            } else {
                forgetTimings(now);
            }
        }
    }

    private void forgetTimings(long now) {
        for (int i = 0, n = scheduler.extent(); i < n; i++) {
            stillSince[i] = now;
        }
    }
}
