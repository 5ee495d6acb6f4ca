package io.weft.testing;

import io.weft.Io;
import io.weft.blocking.BlockingIo;
import io.weft.fiber.FiberIo;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;

/**
 * The Ios that combinator and channel tests run on, for {@code @ParameterizedTest
 * @MethodSource("io.weft.testing.Ios#all")}: each argument makes a fresh Io; wrap its use in
 * try-with-resources through {@link #open}.
 *
 * {@snippet :
 * @ParameterizedTest
 * @MethodSource("io.weft.testing.Ios#all")
 * void something(Ios.Kind kind) {
 *     try (Ios.Opened opened = Ios.open(kind)) {
 *         int v = opened.call(() -> ...);        // runs as a root task on that Io
 *     }
 * }
 * }
 */
public final class Ios {
    private Ios() {}

    /** One kind of Io under test. */
    public record Kind(String name, Supplier<Io> factory, boolean inline, boolean virtualClock) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** An opened Io; closes it (if closeable) at the end of a try-with-resources block. */
    public record Opened(Io io, Kind kind) implements AutoCloseable {
        /** Runs {@code body} as a root task on this Io and returns its value (blocks the caller). */
        public <T> T call(java.util.concurrent.Callable<T> body) {
            return Io.with(io).call(() -> Io.async(body).await());
        }

        @Override
        public void close() {
            if (io instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    throw new IllegalStateException("closing " + kind + " failed", e);
                }
            }
        }
    }

    /** Opens a fresh Io of {@code kind}. */
    public static Opened open(Kind kind) {
        return new Opened(kind.factory().get(), kind);
    }

    /** Every kind: BlockingIo (real and virtual clock) and FiberIo (1 and 4 workers, real and virtual). */
    public static Stream<Named<Kind>> all() {
        return Stream.of(
                        new Kind("BlockingIo", BlockingIo::create, true, false),
                        new Kind(
                                "BlockingIo virtual clock",
                                () -> BlockingIo.builder().virtualClock().build(),
                                true,
                                true),
                        new Kind(
                                "FiberIo 1 worker",
                                () -> FiberIo.builder().workers(1).build(),
                                false,
                                false),
                        new Kind(
                                "FiberIo 4 workers",
                                () -> FiberIo.builder().workers(4).build(),
                                false,
                                false),
                        new Kind(
                                "FiberIo 1 worker virtual clock",
                                () -> FiberIo.builder()
                                        .workers(1)
                                        .virtualClock()
                                        .build(),
                                false,
                                true))
                .map(kind -> Named.of(kind.name(), kind));
    }

    /** Only the kinds that run tasks concurrently (FiberIo), for tests of real concurrency. */
    public static Stream<Named<Kind>> concurrent() {
        return all().filter(named -> !named.getPayload().inline());
    }
}
