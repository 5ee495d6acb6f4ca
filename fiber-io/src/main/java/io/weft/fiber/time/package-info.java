/**
 * FiberIo's clocks and timers (not exported): the real and virtual {@code Clock} and the
 * {@code TimerHeap} the workers fire.
 */
package io.weft.fiber.time;
