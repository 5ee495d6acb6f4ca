package io.weft.samples;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.blocking.BlockingIo;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Shows cancellation: a plain thread cancels a sleeping task, whose {@code finally} runs and whose
 * {@code await} throws {@link Cancelled}; then {@link Io#shield} defers a cancel until the shielded
 * work is done. Thread-safe: each run uses its own {@link BlockingIo} (real clock).
 *
 * <p>Each task hands out its own future with {@link Io#currentTask()}, the way a task lets
 * someone else stop it. The printed lines come out in one order on every run: each thread prints
 * only while the other one waits for it.
 */
public final class Cancellation {
    private Cancellation() {}

    /**
     * What the sample found; immutable.
     *
     * @param cancelAccepted what the canceller's {@code cancel()} returned
     * @param sleeperState the cancelled sleeper's final state
     * @param awaitThrewCancelled whether awaiting the sleeper threw {@link Cancelled}
     * @param shieldedResult what the shielded work returned despite the cancel
     * @param writerState the final state of the task that ran the shielded work
     */
    public record Outcome(
            boolean cancelAccepted,
            Future.State sleeperState,
            boolean awaitThrewCancelled,
            String shieldedResult,
            Future.State writerState) {}

    /**
     * Runs the sample on a new BlockingIo, printing what happens to {@code out}.
     *
     * @param out where to print
     * @return what the sample found
     * @throws InterruptedException if the calling thread is interrupted while it waits for a canceller
     */
    public static Outcome run(PrintStream out) throws InterruptedException {
        BlockingIo io = BlockingIo.create();

        CompletableFuture<Future<?>> handle = new CompletableFuture<>();
        AtomicBoolean accepted = new AtomicBoolean();
        Thread canceller = Thread.ofPlatform().name("canceller").start(() -> {
            Future<?> task = handle.join();
            while (io.pendingTimers() == 0) {
                Thread.onSpinWait(); // until the sleeper's timer is armed: it is asleep
            }
            out.println("canceller: the sleeper is asleep; cancelling it");
            accepted.set(task.cancel());
        });
        Future<String> sleeper = Io.with(io)
                .call(() -> Io.async(() -> {
                    out.println("sleeper: handing out my future, then sleeping for an hour");
                    handle.complete(Io.currentTask().orElseThrow());
                    try {
                        Io.sleep(Duration.ofHours(1));
                        return "rested";
                    } finally {
                        out.println("sleeper: finally runs");
                    }
                }));
        canceller.join();
        out.println("main: cancel() returned " + accepted.get() + "; the sleeper is " + sleeper.state());
        boolean awaitThrewCancelled = false;
        try {
            out.println("main: await() returned " + sleeper.await());
        } catch (Cancelled expected) {
            awaitThrewCancelled = true;
            out.println("main: await() threw " + Cancelled.class.getSimpleName());
        }

        AtomicReference<String> saved = new AtomicReference<>();
        Future<String> writer = Io.with(io)
                .call(() -> Io.async(() -> {
                    Future<?> self = Io.currentTask().orElseThrow();
                    String result = Io.shield(() -> {
                        Thread other = Thread.ofPlatform().name("canceller").start(() -> self.cancel());
                        other.join(); // from here on, the cancel is requested
                        out.println("writer: cancelled inside a shield; saving the report anyway");
                        Io.sleep(Duration.ofMillis(20)); // a suspend point, yet no Cancelled: the shield defers it
                        out.println("writer: report saved");
                        return "report saved";
                    });
                    saved.set(result);
                    out.println("writer: shield exited; sleeping again");
                    try {
                        Io.sleep(Duration.ofHours(1)); // the deferred cancel takes effect here
                        return result;
                    } catch (Cancelled c) {
                        out.println("writer: the deferred cancel arrived at the first sleep after the shield");
                        throw c;
                    }
                }));
        out.println("main: the writer is " + writer.state() + "; its shielded work: " + saved.get());

        return new Outcome(accepted.get(), sleeper.state(), awaitThrewCancelled, saved.get(), writer.state());
    }
}
