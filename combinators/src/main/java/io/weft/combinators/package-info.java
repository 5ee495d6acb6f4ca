/**
 * Operators over {@link io.weft.Future}s and structured concurrency: {@code Scope} (no child
 * outlives it), {@code Futures} ({@code all}, {@code any}, n-ary {@code race}, {@code timeout},
 * {@code retry}, {@code map}/{@code flatMap}/{@code zip}/{@code whenComplete}) and a
 * cancellation-safe {@code Semaphore}. Every operator documents who is cancelled when.
 */
package io.weft.combinators;
