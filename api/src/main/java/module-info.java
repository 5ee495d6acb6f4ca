/**
 * Weft's user-facing API: {@link io.weft.Io}, {@link io.weft.Future}, {@link io.weft.Cancelled}
 * and the raw-operation types an {@code Io} implementation works with.
 *
 * <p>The default {@code Io} (used when none is installed) is found with {@link java.util.ServiceLoader};
 * {@code weft-blocking-io} provides it.
 */
@SuppressWarnings("module") // the qualified export names io.weft.fiber, which is built after this module
module io.weft {
    exports io.weft;
    // HelpsAwaiters, RootTasks and Task, for an Io that runs awaited tasks in place (join helping),
    // runs Io.with bodies as root tasks, and counts and cancels the tasks it runs
    exports io.weft.internal to io.weft.fiber;

    uses io.weft.Io;
}
