package io.weft.benchmarks;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;

/**
 * The floor peer: JDK virtual threads on a trivial scheduler of our own, two platform carrier
 * threads. A continuation submitted from a carrier (a spawn, wake-up or yield by the virtual
 * thread mounted on it) goes to that carrier's own FIFO queue, one from anywhere else to a shared
 * one; a carrier runs its own queue first, then the shared one, then takes from the other
 * carrier's, and spins (with {@code Thread.yield}) when all are empty. No LIFO slot, no batches,
 * no parking, no fairness rules, no clock: the least a two-worker virtual-thread engine can cost,
 * and so the physical limit of the engine FiberIo chose (DESIGN §4). Thread-safe; close it to
 * stop the carriers.
 */
final class FloorCarriers implements Executor, AutoCloseable {
    private static final MethodHandle CURRENT_CARRIER;

    static {
        try {
            CURRENT_CARRIER = MethodHandles.privateLookupIn(Thread.class, MethodHandles.lookup())
                    .findStatic(Thread.class, "currentCarrierThread", MethodType.methodType(Thread.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ConcurrentLinkedQueue<Runnable> shared = new ConcurrentLinkedQueue<>();
    private final List<ConcurrentLinkedQueue<Runnable>> local = new ArrayList<>();
    private final Thread[] carriers = new Thread[Peers.WORKERS];
    private volatile boolean running = true;
    /** Builds virtual threads scheduled by this executor. */
    private final Thread.Builder.OfVirtual threads;

    FloorCarriers() {
        this.threads = virtualThreadBuilder(this);
        for (int i = 0; i < carriers.length; i++) {
            local.add(new ConcurrentLinkedQueue<>());
        }
        for (int i = 0; i < carriers.length; i++) {
            int index = i;
            carriers[i] =
                    Thread.ofPlatform().daemon().name("floor-carrier-" + i).start(() -> runLoop(index));
        }
    }

    /**
     * Returns a builder of virtual threads scheduled by {@code scheduler}: the package-private
     * {@code VirtualThreadBuilder(Executor)}, as FiberIo's Carriers and DESIGN §4's EngineProbe
     * use it (hence {@code --add-opens java.base/java.lang}).
     */
    static Thread.Builder.OfVirtual virtualThreadBuilder(Executor scheduler) {
        try {
            Constructor<?> builder = Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder")
                    .getDeclaredConstructor(Executor.class);
            builder.setAccessible(true);
            return (Thread.Builder.OfVirtual) builder.newInstance(scheduler);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("needs --add-opens java.base/java.lang=ALL-UNNAMED", e);
        }
    }

    private void runLoop(int index) {
        ConcurrentLinkedQueue<Runnable> own = local.get(index);
        ConcurrentLinkedQueue<Runnable> other = local.get((index + 1) % local.size());
        while (running) {
            Runnable next = own.poll();
            if (next == null) {
                next = shared.poll();
            }
            if (next == null) {
                next = other.poll();
            }
            if (next != null) {
                next.run();
            } else {
                Thread.yield();
            }
        }
    }

    @Override
    public void execute(Runnable continuation) {
        Thread carrier;
        try {
            carrier = (Thread) CURRENT_CARRIER.invokeExact();
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
        for (int i = 0; i < carriers.length; i++) {
            if (carriers[i] == carrier) {
                local.get(i).add(continuation);
                return;
            }
        }
        shared.add(continuation);
    }

    /** Returns an unstarted virtual thread on these carriers. */
    Thread unstarted(Runnable body) {
        return threads.unstarted(body);
    }

    /** Returns a factory of virtual threads on these carriers. */
    java.util.concurrent.ThreadFactory factory() {
        return threads.factory();
    }

    /** Starts {@code body} on a new virtual thread on these carriers. */
    <T> FutureTask<T> start(Callable<T> body) {
        FutureTask<T> task = new FutureTask<>(body);
        threads.start(task);
        return task;
    }

    @Override
    public void close() {
        running = false;
        for (Thread carrier : carriers) {
            Peers.join(carrier);
        }
    }
}
