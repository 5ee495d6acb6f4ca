package io.weft.process;

/**
 * A process's view of itself, passed to its {@link Handler} with every message.
 *
 * @param <M> the type of the messages the process receives
 */
public final class ProcessContext<M> {
    private final Processes registry;
    private final Processes.Proc<M> process;

    ProcessContext(Processes registry, Processes.Proc<M> process) {
        this.registry = registry;
        this.process = process;
    }

    /**
     * This process's pid: what others send to. The same across restarts.
     *
     * @return the pid
     */
    public Pid<M> self() {
        return process.pid;
    }

    /**
     * The registry this process belongs to, to send to or ask other processes.
     *
     * @return the registry
     */
    public Processes registry() {
        return registry;
    }

    /**
     * How many times this process has been restarted after a failure: 0 for its first handler.
     *
     * @return the restart count
     */
    public int restarts() {
        return process.restarts;
    }

    /**
     * Ends this process once the current message is handled (at once if none is being handled,
     * as when called from a task the handler spawned): later sends get {@link ProcessNotFound},
     * and the messages still queued go to the registry's dead-letter handler. Idempotent.
     */
    public void stop() {
        process.requestStop();
        process.endIfIdle("it was stopped"); // called while no message is being handled (from a task it spawned): now
    }

    @Override
    public String toString() {
        return "ProcessContext[" + process.pid + "]";
    }
}
