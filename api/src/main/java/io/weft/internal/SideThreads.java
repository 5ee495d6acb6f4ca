package io.weft.internal;

import io.weft.Io;
import java.util.Objects;

/**
 * Threads that Weft code starts beside its caller on behalf of an Io that runs tasks inline: a
 * {@code Reactive.produce} producer under BlockingIo, which cannot run on the subscriber's thread
 * (its first emit without demand would block the thread that is to request). By default such a
 * thread is a JDK virtual thread, scheduled by the JDK. An inline Io with a world of its own (a
 * virtual clock that must stay deterministic) registers a {@code SideThreads} to start them inside
 * that world, and hears through {@link #entering} and {@link #leaving} of every
 * {@link Io#with(Io)} body on it, on every thread (bindings nest, also across Ios). The package
 * is exported only to the modules that register or start side threads. Thread-safe.
 */
public interface SideThreads {

    /**
     * Starts {@code body} on a new thread of {@code io}'s world, with nothing installed on it (the
     * body installs what it needs).
     *
     * @param io the Io the thread works for
     * @param name the thread's name
     * @param body what the thread runs
     * @return the started thread
     */
    Thread start(Io io, String name, Runnable body);

    /**
     * Called on the calling thread before an {@code Io.with(io)} body runs. May wait (for the
     * thread's turn in {@code io}'s world).
     *
     * @param io the Io being bound
     */
    void entering(Io io);

    /**
     * Called by {@code Io.yield} on a virtual thread whose installed Io is {@code io}: if the
     * thread holds a turn in {@code io}'s world, it lets the others that can run go first.
     *
     * @param io the installed Io
     */
    void yielding(Io io);

    /**
     * Called on the calling thread after an {@code Io.with(io)} body ended, however it ended;
     * paired with {@link #entering}.
     *
     * @param io the Io that was bound
     */
    void leaving(Io io);

    /**
     * Makes side threads for Ios of {@code ioClass} start through {@code threads}.
     *
     * @param ioClass the Io implementation class (exactly; subclasses are not included)
     * @param threads what starts them and hears of threads leaving
     */
    static void register(Class<? extends Io> ioClass, SideThreads threads) {
        Registry.SIDE_THREADS.register(ioClass, threads);
    }

    /** Returns what starts side threads for {@code io}'s class, or null for plain virtual threads. */
    static SideThreads of(Io io) {
        return Registry.SIDE_THREADS.find(io.getClass());
    }

    /**
     * Starts {@code body} on a side thread for {@code io}: in its world if its class registered
     * one, else on a new JDK virtual thread.
     *
     * @param io the Io the thread works for
     * @param name the thread's name
     * @param body what the thread runs
     * @return the started thread
     */
    static Thread startFor(Io io, String name, Runnable body) {
        Objects.requireNonNull(body, "body");
        SideThreads threads = of(io);
        return threads != null
                ? threads.start(io, name, body)
                : Thread.ofVirtual().name(name).start(body);
    }

    /** Holds the registrations (an interface cannot have private fields). */
    final class Registry {
        static final PerIoClass<SideThreads> SIDE_THREADS = new PerIoClass<>();

        private Registry() {}
    }
}
