/**
 * {@link io.weft.fiber.FiberIo}: an {@link io.weft.Io} whose tasks are fibers (JDK virtual
 * threads) on Weft's work-stealing scheduler, with a real or a virtual clock.
 */
package io.weft.fiber;
