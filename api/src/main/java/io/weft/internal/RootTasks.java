package io.weft.internal;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import java.util.concurrent.Callable;

/**
 * The Ios whose {@link Io#with(Io)} bodies run as root tasks (DESIGN §3.7). On a scheduling Io
 * (FiberIo), a body run from a thread that is not one of that Io's tasks would otherwise race its
 * workers, unseen by its virtual clock; as a root task it is part of the Io's world: the clock
 * counts it as running, and with one worker the whole program is one deterministic interleaving.
 * The calling thread waits for it, as kotlinx's {@code runBlocking} does. An inline Io (BlockingIo)
 * does not register: its bodies run on the calling thread, which is its world. An Io class opts
 * in once with {@link #register}. Thread-safe.
 */
public final class RootTasks {
    private static final PerIoClass<Boolean> REGISTERED = new PerIoClass<>();

    private RootTasks() {}

    /**
     * Makes {@code Io.with} bodies on Ios of {@code ioClass} run as root tasks.
     *
     * @param ioClass the Io implementation class (exactly; subclasses are not included)
     */
    public static void register(Class<? extends Io> ioClass) {
        REGISTERED.register(ioClass, Boolean.TRUE);
    }

    /**
     * Calls {@code body} with {@code io} installed: as a root task of {@code io} that the caller
     * waits for, if {@code io} registered and the caller is not already one of its tasks; else on
     * the calling thread. Exceptions follow {@link Unchecked#call}: an unchecked failure is
     * rethrown as the same instance, a checked one wrapped in
     * {@link java.util.concurrent.CompletionException}.
     *
     * <p>If the caller stops waiting (its own task is cancelled, or a plain thread is interrupted:
     * {@link Cancelled}), the root task is cancelled, and waited for until it has unwound, before
     * the exception propagates: nothing keeps running unseen (the interrupt flag, or the caller's
     * cancellation, stays as it was).
     */
    public static <T> T call(Io io, Callable<T> body) {
        if (REGISTERED.find(io.getClass()) == null) {
            SideThreads world = SideThreads.of(io);
            if (world == null) {
                return Context.with(io, body);
            }
            world.entering(io);
            try {
                return Context.with(io, body);
            } finally {
                world.leaving(io);
            }
        }
        Task<?> current = Context.currentTask();
        if (current != null && current.io() == io) {
            return Context.with(io, body); // already in io's world
        }
        Task<T> root = Task.spawned(io, body);
        io.spawnRaw(root);
        try {
            return root.await();
        } catch (Cancelled stopped) {
            boolean cancelledIt = root.cancel();
            Awaiting.joinUninterruptibly(root, current); // at once if it was done: cancel found it so
            if (!cancelledIt
                    && !root.isCancelRequested()
                    && stopped.getCause() instanceof RuntimeException own
                    && root.state() == Future.State.CANCELLED) {
                throw own; // the body itself threw a cancellation: the same instance, as on the calling thread
            }
            // a failure of the root (one it unwound into, or one it ended with as the caller
            // stopped waiting) rides on the caller's Cancelled: nobody else holds the root. A task
            // caller that ends cancelled reports it no further (a cancelled task is no failure)
            Throwable ownFailure = root.peekFailure();
            if (ownFailure != null && ownFailure != stopped) {
                stopped.addSuppressed(ownFailure);
                root.markObserved();
            }
            throw stopped;
        }
    }
}
