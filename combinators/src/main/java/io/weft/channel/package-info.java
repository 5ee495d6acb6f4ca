/**
 * {@code Channel}: a bounded multi-producer multi-consumer queue between tasks, whose
 * {@code send} suspends while full and {@code receive} while empty, with exact cancellation
 * safety.
 */
package io.weft.channel;
