/**
 * FiberIo's work-stealing scheduler (not exported): one {@code Worker} per carrier thread with a
 * LIFO slot and a {@code RunQueue}, the global {@code Injector}, {@code IdleWorkers} and each
 * worker's {@code Parker}.
 */
package io.weft.fiber.sched;
