package io.weft.process;

import io.weft.Future;
import java.util.concurrent.CompletableFuture;

/**
 * The answer slot of one {@link Processes#ask}: the asker puts it into its request message, the
 * process completes it once. Thread-safe; the first completion wins.
 *
 * @param <R> the type of the answer
 */
public final class Reply<R> {
    private final CompletableFuture<R> answer = new CompletableFuture<>();

    Reply() {}

    /**
     * Answers with {@code value}.
     *
     * @param value the answer, may be null
     * @return true if this was the first completion (the asker may still have stopped waiting, at
     *     its timeout)
     */
    public boolean complete(R value) {
        return answer.complete(value);
    }

    /**
     * Answers with a failure: the asker's future fails with it, as a task's future would.
     *
     * @param failure the failure
     * @return true if this was the first completion
     * @throws NullPointerException if {@code failure} is null
     */
    public boolean fail(Throwable failure) {
        return answer.completeExceptionally(java.util.Objects.requireNonNull(failure, "failure"));
    }

    /**
     * Whether an answer (or a failure) has been given.
     *
     * @return true once completed
     */
    public boolean isDone() {
        return answer.isDone();
    }

    /** The answer as a Weft future. */
    Future<R> future() {
        return Future.from(answer);
    }

    @Override
    public String toString() {
        return "Reply[" + (answer.isDone() ? "answered" : "pending") + "]";
    }
}
