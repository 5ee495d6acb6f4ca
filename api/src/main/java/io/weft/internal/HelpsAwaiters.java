package io.weft.internal;

import io.weft.Io;

/**
 * What lets the tasks of one kind of Io run in place, on the stack of a task of the same Io that
 * awaits them before they started (join helping). The Io supplies what makes that safe on its
 * threads: the helped task starts with none of the awaiter's ThreadLocal values, and whatever it
 * leaves on the thread (ThreadLocal values, name, context class loader, handler) is dropped when
 * it ends, when the awaiter gets its own back. The interrupt status is not the Io's: Task.runHelped
 * sets it aside and gives it back, with the interrupt of a cancel of the awaiter held back
 * meanwhile (part of the cancel protocol: CancelInterrupts' notes). It runs with the awaiter's context class loader and handler (as a thread the awaiter
 * started would), which a task started on its own thread does not see. An Io class opts in once
 * with {@link #register}; the package is exported only to the Io modules that do. Thread-safe.
 */
public interface HelpsAwaiters {

    /**
     * Runs {@code task}, which {@code awaiter} has claimed, with {@link Task#runHelped} and the
     * calling thread's per-thread state set aside meanwhile (see the class comment). Called only
     * on the awaiter's own thread. The task has ended when this returns (runHelped completes it
     * whatever its body does): the Io counts it as ended here (its queued entry, run later, finds it
     * {@linkplain Task#ranInPlace ran in place}). No closure is made for it: the helper passes
     * what the run needs. If this throws instead (an error the JVM threw: out of memory), the
     * awaiter fails the claimed task with it unless it is done (Task.failClaimedAfterEscape), and
     * its await throws it.
     *
     * @param io the Io of both the helped task and its awaiter
     * @param task the helped task, claimed by {@code awaiter}
     * @param awaiter the task running on this thread, which awaits {@code task}
     * @param slot this thread's context slot, as the awaiter looked it up (handed on to runHelped)
     */
    void runInPlace(Io io, Task<?> task, Task<?> awaiter, Context.Slot slot);

    /**
     * Makes tasks of {@code ioClass} eligible for running in place, with {@code helper}.
     *
     * @param ioClass the Io implementation class (exactly; subclasses are not included)
     * @param helper what runs a claimed task in place, the thread's state set aside around it
     */
    static void register(Class<? extends Io> ioClass, HelpsAwaiters helper) {
        Registry.HELPERS.register(ioClass, helper);
    }

    /** Returns the helper registered for {@code io}'s class, or null. */
    static HelpsAwaiters of(Io io) {
        return Registry.HELPERS.find(io.getClass());
    }

    /** Holds the registrations (an interface cannot have private fields). */
    final class Registry {
        static final PerIoClass<HelpsAwaiters> HELPERS = new PerIoClass<>();

        private Registry() {}
    }
}
