/**
 * Weft's user-facing API: {@link io.weft.Io}, {@link io.weft.Future}, {@link io.weft.Cancelled}
 * and the raw-operation types an {@code Io} implementation works with.
 *
 * <p>The default {@code Io} (used when none is installed) is found with {@link java.util.ServiceLoader};
 * {@code weft-blocking-io} provides it.
 */
@SuppressWarnings("module") // the qualified export names modules built after this one
module io.weft {
    exports io.weft;
    // HelpsAwaiters, RootTasks, Task and Context.Slot (handed on, unopened, by a helper, and made
    // and bound by a runner for its life: Context.newThreadSlot, bind, Task.runIn), for an Io
    // that runs awaited tasks in place (join helping), runs Io.with bodies as root tasks, and
    // counts and cancels the tasks it runs; SideThreads and
    // Context, for an inline Io whose virtual clock keeps the threads beside its callers in turns,
    // and for the combinators that start such threads; TaskProbe, for the conformance kit's checks
    // that a waiter that gave up left nothing behind; ParkClock, for a FiberIo's stall watch that
    // keeps the tick a park stamps its token with
    exports io.weft.internal to
            io.weft.fiber,
            io.weft.blocking,
            io.weft.combinators,
            io.weft.protocol;

    uses io.weft.Io;
}
