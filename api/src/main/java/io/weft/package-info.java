/**
 * What Weft users import: {@link io.weft.Io} with its static entry points ({@code async}, {@code race},
 * {@code sleep}, {@code shield}, {@code with}), the typed {@link io.weft.Future}, the
 * {@link io.weft.Cancelled} signal, and the types of the six raw operations an {@code Io}
 * implementation provides ({@link io.weft.ParkToken}, {@link io.weft.RawTask},
 * {@link io.weft.TimerHandle}).
 *
 * <p>The behaviour of async/await/cancel/race/sleep/shield is implemented once, in this module,
 * on top of the raw operations, so a program gives the same outcomes under every {@code Io}.
 */
package io.weft;
