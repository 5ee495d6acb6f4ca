/**
 * Runnable samples, each a small class whose {@code run(PrintStream)} prints what it does and
 * returns what it found; {@link io.weft.samples.Samples} runs them all in order.
 *
 * <ul>
 *   <li>{@link io.weft.samples.Quotes}: {@code Io.async} look-ups and {@code Io.race};
 *   <li>{@link io.weft.samples.Cancellation}: cancelling a sleeping task from another thread,
 *       {@code finally}, {@code Cancelled} and {@code Io.shield};
 *   <li>{@link io.weft.samples.VirtualClock}: hours of sleeps in no time on a virtual clock.
 * </ul>
 *
 * <p>Build and run them in one command from the repository root:
 * {@code mvn -B -q -Prun-samples -DskipTests package}; or, after a build,
 * {@code java -jar samples/target/weft-samples.jar}. The output is deterministic: no wall-clock
 * time is printed, only times on a virtual clock.
 */
package io.weft.samples;
