package io.weft.internal;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;

/** Weft's one rule for exceptions crossing an API that takes a {@link Callable}. */
public final class Unchecked {
    private Unchecked() {}

    /**
     * Calls {@code body}: unchecked exceptions propagate as the same instance, a checked one is
     * wrapped in {@link CompletionException}.
     */
    public static <T> T call(Callable<T> body) {
        try {
            return body.call();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new CompletionException(e);
        }
    }

    /**
     * Returns {@code failure} ready to throw under the same rule (an Error is thrown from here).
     *
     * @param failure what a body threw
     * @return the exception to throw
     */
    public static RuntimeException rethrowable(Throwable failure) {
        if (failure instanceof RuntimeException r) {
            return r;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        return new CompletionException(failure);
    }
}
