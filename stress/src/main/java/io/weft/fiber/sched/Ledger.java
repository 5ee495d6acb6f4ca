package io.weft.fiber.sched;

/**
 * Bookkeeping for the jcstress tests' arbiters: counts where numbered tasks ended up and
 * whether each was taken exactly once. Not thread-safe; used by one arbiter at a time.
 */
final class Ledger {
    /** A task that only knows its number, from 1. */
    record NumberedTask(int id) implements Runnable {
        @Override
        public void run() {}
    }

    private final int[] times;
    private boolean duplicated;

    /**
     * Creates a ledger for the tasks numbered 1 to {@code tasks}.
     *
     * @param tasks how many tasks the test made
     */
    Ledger(int tasks) {
        this.times = new int[tasks + 1];
    }

    /**
     * The number of a task, or 0 for null (nothing taken).
     *
     * @param task a {@link NumberedTask} or null
     * @return its id, or 0
     */
    static int id(Runnable task) {
        return task == null ? 0 : ((NumberedTask) task).id();
    }

    /**
     * Records one task, if not null.
     *
     * @param task a {@link NumberedTask} or null
     * @return 1 if a task was recorded, 0 for null
     */
    int take(Runnable task) {
        if (task == null) {
            return 0;
        }
        int id = id(task);
        times[id]++;
        if (times[id] > 1) {
            duplicated = true;
        }
        return 1;
    }

    /**
     * Pops and records every task left in a queue; call once the actors are done.
     *
     * @param queue the queue, whose owner has finished
     * @return how many tasks it held
     */
    int takeAll(RunQueue queue) {
        int n = 0;
        Runnable task = queue.pop();
        while (task != null) {
            n += take(task);
            task = queue.pop();
        }
        return n;
    }

    /**
     * Pops and records every task left in an injector.
     *
     * @param injector the injector
     * @return how many tasks it held
     */
    int takeAll(Injector injector) {
        int n = 0;
        Runnable task = injector.pop();
        while (task != null) {
            n += take(task);
            task = injector.pop();
        }
        return n;
    }

    /**
     * Whether every task was recorded exactly once: none lost, none duplicated.
     *
     * @return true if the tasks were conserved
     */
    boolean conserved() {
        if (duplicated) {
            return false;
        }
        for (int id = 1; id < times.length; id++) {
            if (times[id] != 1) {
                return false;
            }
        }
        return true;
    }
}
