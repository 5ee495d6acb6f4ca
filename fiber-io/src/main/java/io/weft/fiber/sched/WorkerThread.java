package io.weft.fiber.sched;

/** A carrier thread of one {@link Scheduler}: runs its {@link Worker}'s loop. */
final class WorkerThread extends Thread {
    final Worker worker;
    /** The kernel's id of this thread (set as it starts its loop), or -1: for the stall watch. */
    volatile int osTid = -1;

    WorkerThread(Worker worker, String name) {
        super(null, worker, name, 0, false);
        this.worker = worker;
        setDaemon(true);
    }
}
