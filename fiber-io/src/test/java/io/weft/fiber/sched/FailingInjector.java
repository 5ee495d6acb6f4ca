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

    private void failIfArmed() {
        if (failNextPush) {
            failNextPush = false;
            failed++;
            throw new OutOfMemoryError("test: no memory for the Injector's nodes");
        }
    }
}
