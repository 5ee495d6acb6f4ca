package io.weft.combinators;

import io.weft.Cancelled;
import java.time.Duration;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * How {@link Futures#retry} retries: how many attempts, the exponential backoff between them,
 * its jitter, and which failures are worth another attempt. Immutable and thread-safe (if the
 * {@code random} supplier is); build one with {@link #builder()}.
 *
 * <p>The delay after failed attempt {@code k} (1-based) is {@code base(k) = min(maxDelay,
 * initialDelay * multiplier^(k-1))}, then jittered: {@code base(k) * (1 + jitter * (2u - 1))}
 * with {@code u} uniform in [0, 1) from the random generator, so it lies within
 * {@code ±jitter * base(k)}. With {@code initialDelay = 100 ms}, {@code multiplier = 2} and no
 * jitter, attempts run at 0, 100, 300, 700 ms...
 *
 * {@snippet :
 * RetryPolicy policy = RetryPolicy.builder()
 *         .maxAttempts(4)
 *         .initialDelay(Duration.ofMillis(100))
 *         .jitter(0.2)
 *         .seed(42)                          // deterministic jitter, e.g. in tests
 *         .build();
 * }
 *
 * @param maxAttempts the number of attempts in all, at least 1 (1 means no retry)
 * @param initialDelay the delay after the first failed attempt; not negative
 * @param multiplier the factor between successive delays; at least 1
 * @param maxDelay the cap on a delay before jitter; at least {@code initialDelay}
 * @param jitter the fraction of a delay by which it is randomly spread, in [0, 1]
 * @param random supplies one generator per {@code retry} call (its jitter source)
 * @param retryOn which failures are retried; {@link Cancelled} never is, whatever this says
 */
public record RetryPolicy(
        int maxAttempts,
        Duration initialDelay,
        double multiplier,
        Duration maxDelay,
        double jitter,
        Supplier<? extends RandomGenerator> random,
        Predicate<? super Throwable> retryOn) {

    /**
     * Validates the components.
     *
     * @throws IllegalArgumentException if a component is out of range
     * @throws NullPointerException if a reference component is null
     */
    public RetryPolicy {
        Objects.requireNonNull(initialDelay, "initialDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        Objects.requireNonNull(random, "random");
        Objects.requireNonNull(retryOn, "retryOn");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1: " + maxAttempts);
        }
        if (initialDelay.isNegative()) {
            throw new IllegalArgumentException("initialDelay must not be negative: " + initialDelay);
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("multiplier must be finite and at least 1: " + multiplier);
        }
        if (maxDelay.compareTo(initialDelay) < 0) {
            throw new IllegalArgumentException("maxDelay " + maxDelay + " is below initialDelay " + initialDelay);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("jitter must be in [0, 1]: " + jitter);
        }
        Predicate<? super Throwable> userRule = retryOn;
        retryOn = failure -> !(failure instanceof Cancelled) && userRule.test(failure);
    }

    /**
     * Returns a builder with the defaults: 3 attempts, 100 ms initial delay, multiplier 2,
     * 30 s max delay, no jitter, an unseeded {@link SplittableRandom} per call, and retry on
     * every {@link Exception} (not on {@link Error}s, never on {@link Cancelled}).
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the delay to sleep after failed attempt {@code attempt} (1-based), drawing one
     * number from {@code random} if there is jitter. Never negative.
     *
     * @param attempt the attempt that just failed, at least 1
     * @param random the jitter source
     * @return the delay before the next attempt
     * @throws IllegalArgumentException if {@code attempt} is less than 1
     * @throws NullPointerException if {@code random} is null
     */
    public Duration delayAfter(int attempt, RandomGenerator random) {
        Objects.requireNonNull(random, "random");
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be at least 1: " + attempt);
        }
        double capNanos = toNanos(maxDelay);
        double baseNanos = Math.min(capNanos, toNanos(initialDelay) * Math.pow(multiplier, attempt - 1));
        if (jitter > 0.0) {
            baseNanos *= 1.0 + jitter * (2.0 * random.nextDouble() - 1.0);
        }
        return Duration.ofNanos((long) Math.max(0.0, Math.min(baseNanos, Long.MAX_VALUE)));
    }

    private static double toNanos(Duration duration) {
        return duration.getSeconds() * 1e9 + duration.getNano();
    }

    /** A mutable builder of {@link RetryPolicy}; not thread-safe. */
    public static final class Builder {
        private int maxAttempts = 3;
        private Duration initialDelay = Duration.ofMillis(100);
        private double multiplier = 2.0;
        private Duration maxDelay = Duration.ofSeconds(30);
        private double jitter;
        private Supplier<? extends RandomGenerator> random = SplittableRandom::new;
        private Predicate<? super Throwable> retryOn = failure -> failure instanceof Exception;

        private Builder() {}

        /**
         * Sets the number of attempts in all.
         *
         * @param maxAttempts at least 1
         * @return this builder
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Sets the delay after the first failed attempt.
         *
         * @param initialDelay not negative
         * @return this builder
         */
        public Builder initialDelay(Duration initialDelay) {
            this.initialDelay = initialDelay;
            return this;
        }

        /**
         * Sets the factor between successive delays.
         *
         * @param multiplier at least 1
         * @return this builder
         */
        public Builder multiplier(double multiplier) {
            this.multiplier = multiplier;
            return this;
        }

        /**
         * Sets the cap on a delay (before jitter).
         *
         * @param maxDelay at least the initial delay
         * @return this builder
         */
        public Builder maxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
            return this;
        }

        /**
         * Sets the fraction by which each delay is randomly spread.
         *
         * @param jitter in [0, 1]; 0 means none
         * @return this builder
         */
        public Builder jitter(double jitter) {
            this.jitter = jitter;
            return this;
        }

        /**
         * Makes the jitter deterministic: each {@code retry} call draws from a fresh
         * {@link SplittableRandom} seeded with {@code seed}.
         *
         * @param seed the seed
         * @return this builder
         */
        public Builder seed(long seed) {
            this.random = () -> new SplittableRandom(seed);
            return this;
        }

        /**
         * Sets the jitter source: called once per {@code retry} call that needs a delay.
         *
         * @param random supplies a generator
         * @return this builder
         */
        public Builder random(Supplier<? extends RandomGenerator> random) {
            this.random = random;
            return this;
        }

        /**
         * Sets which failures are retried ({@link Cancelled} never is).
         *
         * @param retryOn true for a failure worth another attempt
         * @return this builder
         */
        public Builder retryOn(Predicate<? super Throwable> retryOn) {
            this.retryOn = retryOn;
            return this;
        }

        /**
         * Builds the policy.
         *
         * @return a new policy
         * @throws IllegalArgumentException if a setting is out of range
         * @throws NullPointerException if a reference setting is null
         */
        public RetryPolicy build() {
            return new RetryPolicy(maxAttempts, initialDelay, multiplier, maxDelay, jitter, random, retryOn);
        }
    }
}
