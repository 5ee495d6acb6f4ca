/**
 * Reactive Streams adapters, both directions, for {@code org.reactivestreams} and
 * {@link java.util.concurrent.Flow}: {@link io.weft.reactive.Reactive} turns a future, a channel or
 * a producer task into a {@link io.weft.reactive.WeftPublisher} (backpressure by suspension: the
 * producer's {@code emit} suspends until the subscriber has demand), and consumes any publisher
 * through an {@link io.weft.reactive.Inbox} with bounded prefetch, whose {@code receive} suspends
 * the consuming task. {@link io.weft.reactive.Flows} has the same entry points typed for
 * {@code java.util.concurrent.Flow}.
 */
package io.weft.reactive;
