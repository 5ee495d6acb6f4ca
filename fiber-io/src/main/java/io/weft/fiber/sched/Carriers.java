package io.weft.fiber.sched;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.util.concurrent.Executor;

/**
 * The two JDK internals FiberIo needs, opened by {@code --add-opens java.base/java.lang}: the
 * virtual-thread builder that takes a scheduler, and the current carrier thread. Thread-safe.
 */
public final class Carriers {
    /*
     * Implementation notes.
     *
     * java.lang.ThreadBuilders$VirtualThreadBuilder(Executor) builds virtual threads whose
     * continuation is submitted to the given Executor on start, on unpark and after a yield;
     * that Executor is Weft's scheduler. Thread.currentCarrierThread() tells, from inside a
     * fiber, which platform thread it is mounted on: that is how a spawn or wake-up from a fiber
     * finds its worker's LIFO slot. Both are package-private in java.lang, hence the flag.
     *
     * Checked once, when the first FiberIo is built: without the flag the constructor fails with
     * an IllegalStateException that names the flag, instead of an obscure reflection error later.
     */

    /** The flag, as users pass it on the class path. */
    public static final String ADD_OPENS_FLAG = "--add-opens java.base/java.lang=ALL-UNNAMED";

    private static final MethodHandle CURRENT_CARRIER;
    private static final Constructor<?> BUILDER;
    private static final RuntimeException UNAVAILABLE;

    static {
        MethodHandle carrier = null;
        Constructor<?> builder = null;
        RuntimeException problem = null;
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(Thread.class, MethodHandles.lookup());
            carrier = lookup.findStatic(Thread.class, "currentCarrierThread", MethodType.methodType(Thread.class));
            builder = Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder").getDeclaredConstructor(Executor.class);
            builder.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            String module = Carriers.class.getModule().isNamed() ? Carriers.class.getModule().getName() : "ALL-UNNAMED";
            problem = new IllegalStateException("FiberIo needs the JVM flag --add-opens java.base/java.lang=" + module
                    + " (it runs fibers as virtual threads on its own scheduler, through a JDK constructor that is not"
                    + " public); add it to the java command line, Surefire's argLine or the jar manifest (Add-Opens)", e);
        }
        CURRENT_CARRIER = carrier;
        BUILDER = builder;
        UNAVAILABLE = problem;
    }

    private Carriers() {}

    /** Throws the fail-fast error if the JDK internals are not reachable. */
    public static void checkAvailable() {
        if (UNAVAILABLE != null) {
            throw UNAVAILABLE;
        }
    }

    /** Returns a virtual-thread builder whose threads are scheduled by {@code scheduler}. */
    public static Thread.Builder.OfVirtual virtualThreadBuilder(Executor scheduler) {
        checkAvailable();
        try {
            return (Thread.Builder.OfVirtual) BUILDER.newInstance(scheduler);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("could not create a virtual-thread builder", e);
        }
    }

    /** Returns the platform thread the current thread runs on (itself, for a platform thread). */
    static Thread currentCarrier() {
        try {
            return (Thread) CURRENT_CARRIER.invokeExact();
        } catch (Throwable e) {
            throw new IllegalStateException("Thread.currentCarrierThread failed", e);
        }
    }
}
