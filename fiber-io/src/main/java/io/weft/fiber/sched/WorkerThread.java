package io.weft.fiber.sched;

/** A carrier thread of one {@link Scheduler}: runs its {@link Worker}'s loop. */
final class WorkerThread extends Thread {
    final Worker worker;

    WorkerThread(Worker worker, String name) {
        super(null, worker, name, 0, false);
        this.worker = worker;
        setDaemon(true);
    }
}
