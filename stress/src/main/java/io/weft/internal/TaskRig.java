package io.weft.internal;

import io.weft.Io;
import io.weft.blocking.BlockingIo;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToIntFunction;

/** Builds the tasks the task state word tests race: a body that may use its own task. */
final class TaskRig {
    /** The Io the tasks belong to; they run on the jcstress actor that calls {@link Task#run()}. */
    static final Io IO = BlockingIo.create();

    private TaskRig() {}

    /** A task on {@link #IO} whose body is {@code body(itself)}. */
    static Task<Integer> task(ToIntFunction<Task<Integer>> body) {
        AtomicReference<Task<Integer>> self = new AtomicReference<>();
        self.set(Task.spawned(IO, () -> body.applyAsInt(self.get())));
        return self.get();
    }
}
