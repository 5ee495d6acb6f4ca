/**
 * The one implementation of Weft's task semantics: the task record behind every {@code Future}
 * ({@link io.weft.internal.Task}), the installed context ({@link io.weft.internal.Context}),
 * {@code race}, {@code sleep} and {@code shield}, and the clock a park stamps its token with
 * ({@link io.weft.internal.ParkClock}). Not exported; users reach it through
 * {@link io.weft.Io}'s static methods.
 */
package io.weft.internal;
