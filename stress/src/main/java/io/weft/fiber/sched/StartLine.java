package io.weft.fiber.sched;

import java.util.concurrent.ThreadLocalRandom;

/**
 * A start line for the Termination-mode tests: the actor waits at it until the signal opens it,
 * so the two race instead of running a millisecond apart. Thread-safe: one thread opens, one
 * waits.
 *
 * <p>jcstress starts a Termination test's actor, then polls with {@code sleep(1 ms)} until it
 * has started before calling the signal; without a start line the actor has long finished its
 * protocol and sits in {@code park} when the signal comes, and only that one interleaving is
 * ever tried. Both sides then spin a random number of {@link Thread#onSpinWait()}s, which
 * spreads their relative start over a few hundred nanoseconds, about the length of the
 * protocols under test, so every interleaving gets its turn.
 *
 * <p>The two threads only race on two CPUs. Under jcstress' default affinity ({@code -af LOCAL})
 * the fork of a one-actor test, which every Termination test is, runs under {@code taskset} on a
 * single CPU: the signal then runs while the actor waits, and the interleavings these tests are
 * about almost never happen (their mutants pass). Run them with {@code -af NONE}.
 */
public final class StartLine {
    /** Written once by the signal, read by the actor. */
    private volatile boolean open;

    /** Lets the waiting actor go. Called by the signal, first thing. */
    public void open() {
        open = true;
    }

    /** Spins until {@link #open()} is called. Called by the actor. */
    public void await() {
        while (!open) {
            Thread.onSpinWait();
        }
    }

    /**
     * Spins between 0 and {@code maxSpins} times, chosen at random. The random numbers only
     * shift when a thread starts; they decide nothing in the code under test.
     *
     * @param maxSpins the most {@link Thread#onSpinWait()} calls
     */
    public static void jitter(int maxSpins) {
        int spins = ThreadLocalRandom.current().nextInt(maxSpins + 1);
        for (int i = 0; i < spins; i++) {
            Thread.onSpinWait();
        }
    }
}
