package io.weft.fiber;

import io.weft.Io;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * Runs a program under many scheduler seeds to find an ordering bug, and replays the seed that
 * found it: deterministic simulation testing in the production runtime. Each run gets a fresh
 * FiberIo with one worker, a virtual clock and {@link FiberIo.Builder#explore(long) explore(seed)},
 * and runs the body as its root task ({@code Io.with}); a seed is the whole interleaving, so a
 * failure replays exactly.
 *
 * {@snippet :
 * Simulation.explore(200, () -> {
 *     Cache cache = new Cache();
 *     Io.race(Io.async(() -> cache.load("a")), Io.async(() -> cache.evict("a")));
 *     cache.checkInvariants();          // throws if some order breaks them
 *     return null;
 * });
 * // on failure: Simulation.Failure "failed under seed 17 ... replay: Simulation.replay(17, body)"
 * }
 */
public final class Simulation {

    private Simulation() {}

    /** A body that failed under one seed; {@link #seed()} replays it with {@link #replay}. */
    public static final class Failure extends AssertionError {
        private static final long serialVersionUID = 1L;
        private final long seed;

        Failure(long seed, Throwable cause) {
            super(
                    "failed under seed " + seed + " (replay: Simulation.replay(" + seed + ", body), or"
                            + " FiberIo.builder().workers(1).virtualClock().explore(" + seed + ")): " + cause,
                    cause);
            this.seed = seed;
        }

        /**
         * Returns the seed the body failed under.
         *
         * @return the seed
         */
        public long seed() {
            return seed;
        }
    }

    /**
     * Runs {@code body} under seeds {@code 0 .. seeds-1}, one fresh FiberIo each, and stops at the
     * first seed under which it throws.
     *
     * @param seeds how many seeds to try, at least 1
     * @param body the program: a failure is anything it throws
     * @throws Failure naming the seed, with the body's exception as the cause
     * @throws IllegalArgumentException if {@code seeds < 1}
     * @throws NullPointerException if {@code body} is null
     */
    public static void explore(int seeds, Callable<?> body) {
        Objects.requireNonNull(body, "body");
        if (seeds < 1) {
            throw new IllegalArgumentException("seeds must be at least 1, got " + seeds);
        }
        for (long seed = 0; seed < seeds; seed++) {
            try {
                replay(seed, body);
            } catch (Throwable t) {
                throw new Failure(seed, t);
            }
        }
    }

    /**
     * Runs {@code body} once under {@code seed} and returns what it returns: the same interleaving
     * as every other run under that seed.
     *
     * @param seed the seed
     * @param body the program
     * @param <T> the value's type
     * @return what {@code body} returns
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of {@code body};
     *     unchecked ones propagate as they are
     * @throws NullPointerException if {@code body} is null
     */
    public static <T> T replay(long seed, Callable<T> body) {
        Objects.requireNonNull(body, "body");
        try (FiberIo io = FiberIo.builder()
                .workers(1)
                .virtualClock()
                .explore(seed)
                .name("simulation-" + seed)
                .build()) {
            return Io.with(io).call(body);
        }
    }
}
