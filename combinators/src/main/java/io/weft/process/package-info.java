/**
 * Processes: long-lived handlers with a typed mailbox and an id (a process holds a task only
 * while it has messages to handle), registered in a {@link
 * io.weft.process.Processes} registry that routes {@code send(pid, message)} to them, answers
 * request-reply ({@code ask}) with a timeout, restarts failing processes by policy and shuts them
 * all down with a deadline. Written against the {@link io.weft.Io} API, so the same processes run
 * on every Io, including a virtual clock.
 */
package io.weft.process;
