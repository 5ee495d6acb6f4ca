/**
 * {@link io.weft.blocking.BlockingIo}: an {@link io.weft.Io} that runs every task inline on the
 * caller's thread, with its own timers and a real or virtual clock.
 */
package io.weft.blocking;
