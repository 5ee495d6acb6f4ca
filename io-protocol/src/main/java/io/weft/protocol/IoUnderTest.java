package io.weft.protocol;

import io.weft.Io;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What a conformance suite tests: how to make the Io, and the two facts about it that some
 * contracts need. Immutable and thread-safe; share one per configuration across the nested
 * contract classes.
 *
 * {@snippet :
 * static final IoUnderTest ONE_WORKER = IoUnderTest.scheduling(() -> MyIo.withWorkers(1));
 *
 * @Nested class Race extends RaceContract {
 *     @Override protected IoUnderTest subject() { return ONE_WORKER; }
 * }
 * }
 *
 * @param factory makes a fresh Io for each test (closed after it if {@link AutoCloseable})
 * @param runsTasksInline whether {@code Io.async} runs the body to completion before returning
 * @param hasVirtualClock whether the clock is virtual (jumps to the next timer when idle)
 * @param withHandler makes a fresh Io like {@code factory} whose
 *     {@link Io#uncaughtExceptionHandler()} is the given handler; null if the Io has no way to
 *     configure one (the contracts that need it are then skipped)
 */
public record IoUnderTest(
        Supplier<? extends Io> factory,
        boolean runsTasksInline,
        boolean hasVirtualClock,
        Function<Thread.UncaughtExceptionHandler, ? extends Io> withHandler) {

    /**
     * Checks the factory.
     *
     * @param factory makes a fresh Io for each test
     * @param runsTasksInline whether {@code Io.async} runs the body before returning
     * @param hasVirtualClock whether the clock is virtual
     * @param withHandler makes an Io with a given uncaught-exception handler, or null
     */
    public IoUnderTest {
        Objects.requireNonNull(factory, "factory");
    }

    /**
     * An Io under test without a configurable handler.
     *
     * @param factory makes a fresh Io for each test
     * @param runsTasksInline whether {@code Io.async} runs the body before returning
     * @param hasVirtualClock whether the clock is virtual
     */
    public IoUnderTest(Supplier<? extends Io> factory, boolean runsTasksInline, boolean hasVirtualClock) {
        this(factory, runsTasksInline, hasVirtualClock, null);
    }

    /**
     * The same, with a way to make the Io with a given uncaught-exception handler (for the
     * contracts on detached tasks' failures).
     *
     * @param withHandler makes a fresh Io, configured like {@code factory}'s, with that handler
     * @return a copy with {@code withHandler}
     */
    public IoUnderTest withUncaughtExceptionHandler(
            Function<Thread.UncaughtExceptionHandler, ? extends Io> withHandler) {
        return new IoUnderTest(
                factory, runsTasksInline, hasVirtualClock, Objects.requireNonNull(withHandler, "withHandler"));
    }

    /**
     * An Io that runs tasks inline on the caller's thread, on a real clock.
     *
     * @param factory makes a fresh Io for each test
     * @return the subject
     */
    public static IoUnderTest inline(Supplier<? extends Io> factory) {
        return new IoUnderTest(factory, true, false);
    }

    /**
     * An Io that runs tasks on threads of its own, on a real clock.
     *
     * @param factory makes a fresh Io for each test
     * @return the subject
     */
    public static IoUnderTest scheduling(Supplier<? extends Io> factory) {
        return new IoUnderTest(factory, false, false);
    }

    /**
     * The same Io on a virtual clock.
     *
     * @return a copy that says the clock is virtual
     */
    public IoUnderTest withVirtualClock() {
        return new IoUnderTest(factory, runsTasksInline, true, withHandler);
    }
}
