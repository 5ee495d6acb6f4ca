package io.weft.process;

import java.util.Objects;

/**
 * The id of a process in a {@link Processes} registry, typed by the messages its mailbox takes.
 * A value: two pids are equal when their ids are; the name is for people (logs, errors, dumps).
 * A pid stays the same across restarts of its process and is never reused by its registry.
 *
 * @param id the number the registry gave the process, unique within the registry
 * @param name the name it was spawned with
 * @param <M> the type of the messages the process receives
 */
public record Pid<M>(long id, String name) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException if {@code name} is null
     */
    public Pid {
        Objects.requireNonNull(name, "name");
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Pid<?> pid && pid.id == id;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(id);
    }

    @Override
    public String toString() {
        return name + "#" + id;
    }
}
