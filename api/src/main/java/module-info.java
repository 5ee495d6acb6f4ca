/**
 * Weft's user-facing API: {@link io.weft.Io}, {@link io.weft.Future}, {@link io.weft.Cancelled}
 * and the raw-operation types an {@code Io} implementation works with.
 *
 * <p>The default {@code Io} (used when none is installed) is found with {@link java.util.ServiceLoader};
 * {@code weft-blocking-io} provides it.
 */
module io.weft {
    exports io.weft;

    uses io.weft.Io;
}
