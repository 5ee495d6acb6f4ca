package io.weft.fiber.sched;

/**
 * An Injector whose next push, single or batch, fails as it would with no memory left for its
 * nodes, once {@link #failNextPush} is set; every push after that one works.
 */
final class FailingInjector extends Injector {
    /** Set to make the next push throw; cleared by that push. */
    volatile boolean failNextPush;

    /** How many pushes were made to fail. */
    volatile int failed;

    /** While set, every node allocation fails (the heap full): pushes fail, wake-ups take rescue slots. */
    volatile boolean noMemoryForNodes;

    FailingInjector(boolean failNextPush) {
        this.failNextPush = failNextPush;
    }

    @Override
    void push(Runnable task) {
        failIfArmed();
        super.push(task);
    }

    @Override
    void pushBatch(Runnable[] batch, int from, int count) {
        failIfArmed();
        super.pushBatch(batch, from, count);
    }

    /** How many tasks went into a rescue slot. */
    final java.util.concurrent.atomic.AtomicInteger rescues = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    boolean putRescued(Runnable task) {
        boolean put = super.putRescued(task);
        if (put) {
            rescues.incrementAndGet();
        }
        return put;
    }

    @Override
    Node newNode(Runnable task) {
        if (noMemoryForNodes) {
            throw new OutOfMemoryError("test: no memory for an Injector node");
        }
        return super.newNode(task);
    }

    private void failIfArmed() {
        if (failNextPush) {
            failNextPush = false;
            failed++;
            throw new OutOfMemoryError("test: no memory for the Injector's nodes");
        }
    }
}
