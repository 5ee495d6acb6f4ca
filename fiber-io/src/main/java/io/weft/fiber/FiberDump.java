package io.weft.fiber;

import io.weft.Io;
import io.weft.ParkToken;
import io.weft.RawTask;
import io.weft.internal.Sleep;
import io.weft.internal.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A snapshot of a {@link FiberIo}'s started tasks, made by {@link FiberIo#dump()}: the task tree
 * (spawner to children), each task's state, what it waits for and since when, and the stack of
 * each parked one; plus what looks like a deadlock. As data (the records) and as text
 * ({@link #toString()}).
 *
 * <p>A snapshot is taken while the tasks run: each entry is consistent with itself, not with the
 * others (a task may have ended, or a child started, as the snapshot was made). Tasks queued and
 * not started yet are counted ({@link #notStarted()}), not listed.
 *
 * @param io the FiberIo's name
 * @param threadContainer the thread container its fibers are listed under in a JSON thread dump
 * @param nowMs the FiberIo's clock when the snapshot was taken
 * @param liveTasks how many tasks were live (started or queued)
 * @param tasks the started tasks, spawners before their children
 * @param deadlocks what looks like a deadlock, one sentence each; empty if nothing does
 */
public record FiberDump(
        String io, String threadContainer, long nowMs, int liveTasks, List<TaskEntry> tasks, List<String> deadlocks) {

    /**
     * One started task.
     *
     * @param id the task's number (as in its {@code toString}, {@code Task#id})
     * @param name the name given to {@code Io.async(name, body)}, or null
     * @param state {@code RUNNING} (on a worker now), {@code PARKED} (suspended), {@code BLOCKED}
     *     (its thread waits in a JDK call, not at a Weft suspend point), or {@code HELPING} (it
     *     runs a task it awaits in place, above it on its stack); with
     *     {@code ", cancelling"} if a cancel is unwinding it
     * @param spawnerId the number of the task that spawned it, if that task is live; else 0
     * @param children the numbers of the listed tasks it spawned
     * @param thread the fiber running it ({@code #tid "name"}), as a thread dump names it
     * @param waitingFor what it is parked on: a future, a channel, a semaphore, a timer... (null
     *     unless parked)
     * @param awaitsTask the number of the task it awaits, or 0
     * @param waiting how long it has been parked (zero unless parked)
     * @param stack its thread's stack (empty while it runs on a worker)
     */
    public record TaskEntry(
            long id,
            String name,
            String state,
            long spawnerId,
            List<Long> children,
            String thread,
            String waitingFor,
            long awaitsTask,
            Duration waiting,
            List<StackTraceElement> stack) {
        /** Copies the lists. */
        public TaskEntry {
            children = List.copyOf(children);
            stack = List.copyOf(stack);
            Objects.requireNonNull(state, "state");
            Objects.requireNonNull(waiting, "waiting");
        }
    }

    /** Copies the lists. */
    public FiberDump {
        tasks = List.copyOf(tasks);
        deadlocks = List.copyOf(deadlocks);
    }

    /** Snapshots {@code started}, the jobs of {@code fiberIo} that started and have not ended. */
    static FiberDump of(FiberIo fiberIo, String container, int liveTasks, List<RawTask> started, boolean timersArmed) {
        Map<Task<?>, Long> ids = new LinkedHashMap<>();
        for (RawTask job : started) {
            if (job instanceof Task<?> task && !task.isDone()) {
                ids.put(task, task.number());
            }
        }
        Map<Long, List<Long>> children = new HashMap<>();
        for (Task<?> task : ids.keySet()) {
            Task<?> spawner = task.spawner();
            if (spawner != null && ids.containsKey(spawner)) {
                children.computeIfAbsent(ids.get(spawner), k -> new ArrayList<>())
                        .add(ids.get(task));
            }
        }
        Map<Long, TaskEntry> entries = new LinkedHashMap<>();
        boolean allParkedOnWeft = !ids.isEmpty();
        Map<Long, Long> awaits = new HashMap<>();
        for (Map.Entry<Task<?>, Long> e : ids.entrySet()) {
            Task<?> task = e.getKey();
            long id = e.getValue();
            Thread thread = task.runningThread();
            ParkToken token = task.parkedOn();
            Task<?> awaited = task.awaitingNow();
            Task<?> helped = task.helping();
            Thread.State threadState = thread == null ? Thread.State.RUNNABLE : thread.getState();
            boolean parked = token != null && threadState != Thread.State.RUNNABLE;
            String state = helped != null
                    ? "HELPING"
                    : parked
                            ? "PARKED"
                            : threadState == Thread.State.WAITING || threadState == Thread.State.TIMED_WAITING
                                    ? "BLOCKED"
                                    : "RUNNING";
            if (task.isCancelRequested()) {
                state += ", cancelling";
            }
            // a helper waits for the task it runs in place, which is listed (and judged) itself
            // ... and on something inside the FiberIo: a future completed from outside (Future.from
            // of a CompletableFuture: an Io.blocking body, an HTTP response) or a timer can end it
            allParkedOnWeft &= helped != null
                    || parked && !(token.blocker() instanceof Sleep.Until) && !completedFromOutside(token.blocker());
            Task<?> spawner = task.spawner();
            long awaitsId = awaited != null && ids.containsKey(awaited) ? ids.get(awaited) : 0;
            if (awaitsId != 0) {
                awaits.put(id, awaitsId);
            }
            Object blocker = token == null ? null : token.blocker();
            entries.put(
                    id,
                    new TaskEntry(
                            id,
                            task.name(),
                            state,
                            spawner != null && ids.containsKey(spawner) ? ids.get(spawner) : 0,
                            children.getOrDefault(id, List.of()),
                            thread == null ? "(none)" : "#" + thread.threadId() + " \"" + thread.getName() + "\"",
                            helped != null
                                    ? "Task#" + helped.number() + ", which it runs in place (it awaited it)"
                                    : parked ? describe(blocker, token) : null,
                            awaitsId,
                            parked && helped == null ? token.age() : Duration.ZERO,
                            helped == null && (parked || state.startsWith("BLOCKED"))
                                    ? List.of(thread.getStackTrace())
                                    : List.of()));
        }
        List<String> deadlocks = new ArrayList<>();
        Set<Long> reported = new HashSet<>();
        for (long start : awaits.keySet()) {
            List<Long> path = new ArrayList<>();
            long at = start;
            while (awaits.containsKey(at) && !path.contains(at)) {
                path.add(at);
                at = awaits.get(at);
            }
            if (path.contains(at) && reported.add(at)) {
                List<Long> cycle = path.subList(path.indexOf(at), path.size());
                StringBuilder sb = new StringBuilder("await cycle: ");
                for (long id : cycle) {
                    sb.append("Task#").append(id).append(" awaits ");
                }
                deadlocks.add(sb.append("Task#")
                        .append(at)
                        .append(": none of them can finish")
                        .toString());
                reported.addAll(cycle);
            }
        }
        if (allParkedOnWeft && !timersArmed && liveTasks == ids.size()) {
            deadlocks.add("every live task (" + ids.size() + ") is parked at a Weft suspend point, none on a timer,"
                    + " and none is queued: no task can make progress unless a thread outside " + fiberIo.name()
                    + " readies one (sends to a channel, completes a future, releases a permit)");
        }
        return new FiberDump(
                fiberIo.name(), container, fiberIo.nowMs(), liveTasks, new ArrayList<>(entries.values()), deadlocks);
    }

    /** Whether {@code blocker} is a future no task of any Io completes: Future.from of a stage. */
    private static boolean completedFromOutside(Object blocker) {
        return blocker instanceof Task<?> task && task.io() == null;
    }

    private static String describe(Object blocker, ParkToken token) {
        if (blocker instanceof Task<?> awaited) {
            return "await " + awaited;
        }
        if (blocker != null) {
            return blocker.toString();
        }
        return token.toString();
    }

    /** Returns the entry of task number {@code id}, if listed. */
    TaskEntry task(long id) {
        for (TaskEntry entry : tasks) {
            if (entry.id() == id) {
                return entry;
            }
        }
        return null;
    }

    /**
     * The snapshot as text: a header, the task tree (children indented under their spawner) with
     * each task's state, thread and wait, the stacks of parked tasks, and the deadlocks.
     *
     * @return the text
     */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append("FiberIo ")
                .append(io)
                .append(" at ")
                .append(nowMs == Io.NO_DEADLINE ? "?" : nowMs + " ms")
                .append(": ")
                .append(liveTasks)
                .append(" live task(s), ")
                .append(tasks.size())
                .append(" started, ")
                .append(notStarted())
                .append(" queued; fibers in thread container ")
                .append(threadContainer)
                .append('\n');
        for (TaskEntry entry : tasks) {
            if (entry.spawnerId() == 0) {
                appendTree(sb, entry, 1, new HashSet<>());
            }
        }
        for (TaskEntry entry : tasks) {
            if (entry.stack().isEmpty()) {
                continue;
            }
            sb.append("\nTask#")
                    .append(entry.id())
                    .append(' ')
                    .append(entry.thread())
                    .append('\n');
            for (StackTraceElement frame : entry.stack()) {
                sb.append("    at ").append(frame).append('\n');
            }
        }
        if (!deadlocks.isEmpty()) {
            sb.append("\nDEADLOCK\n");
            for (String d : deadlocks) {
                sb.append("  ").append(d).append('\n');
            }
        }
        return sb.toString();
    }

    /**
     * Returns how many live tasks were queued and not started when the snapshot was taken.
     *
     * @return the live tasks not listed
     */
    public int notStarted() {
        return Math.max(0, liveTasks - tasks.size());
    }

    private void appendTree(StringBuilder sb, TaskEntry entry, int depth, Set<Long> seen) {
        if (!seen.add(entry.id())) {
            return;
        }
        sb.append("  ".repeat(depth)).append("Task#").append(entry.id());
        if (entry.name() != null) {
            sb.append(" \"").append(entry.name()).append('"');
        }
        sb.append(' ').append(entry.state()).append(" on ").append(entry.thread());
        if (entry.waitingFor() != null) {
            sb.append(", waiting for ")
                    .append(entry.waitingFor())
                    .append(" for ")
                    .append(entry.waiting().toMillis())
                    .append(" ms");
        }
        sb.append('\n');
        for (long child : entry.children()) {
            TaskEntry c = task(child);
            if (c != null) {
                appendTree(sb, c, depth + 1, seen);
            }
        }
    }
}
