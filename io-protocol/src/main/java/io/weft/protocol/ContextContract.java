package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §3.1 and §3.7: the installed Io is visible in the code run under {@code Io.with} and in
 * every task spawned under it, at any depth, on whatever thread runs it.
 */
public abstract class ContextContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected ContextContract() {}

    @Test
    void withInstallsTheIoForItsBody() {
        assertSame(io, inIo(Io::current));
    }

    @Test
    void aTaskInheritsTheIoItWasSpawnedUnder() {
        assertSame(io, inIo(() -> Io.async(Io::current).await()));
    }

    @Test
    void nestedTasksInheritTheIoAtEveryDepth() {
        Io seen = inIo(() -> Io.async(
                        () -> Io.async(() -> Io.async(Io::current).await()).await())
                .await());
        assertSame(io, seen);
    }

    @Test
    void manyTasksAllSeeTheIo() {
        List<Future<Io>> futures = new ArrayList<>();
        runInIo(() -> {
            for (int i = 0; i < 100; i++) {
                futures.add(Io.async(Io::current));
            }
        });
        for (Future<Io> f : futures) {
            assertSame(io, inIo(f::await));
        }
    }

    @Test
    void aNestedBindingWinsInsideAndTheOuterOneIsRestoredAfter() {
        Io other = newIo();
        try {
            List<Io> seen = new ArrayList<>();
            runInIo(() -> {
                seen.add(Io.current());
                Io.with(other).run(() -> seen.add(Io.current()));
                seen.add(Io.current());
            });
            assertEquals(List.of(io, other, io), seen);
            assertNotSame(io, other);
        } finally {
            closeIfCloseable(other);
        }
    }

    @Test
    void aTaskKeepsItsIoWhenItsSpawnerRebindsAnother() {
        Io other = newIo();
        try {
            Io seen = inIo(() -> {
                Future<Io> f = Io.async(Io::current);
                return Io.with(other).call(f::await);
            });
            assertSame(io, seen);
        } finally {
            closeIfCloseable(other);
        }
    }

    @Test
    void currentTaskIsTheRunningTasksFutureAndEmptyOnAPlainThread() {
        assertEquals(Optional.empty(), Io.currentTask());
        Optional<Future<?>> underWith = inIo(Io::currentTask);
        if (runsTasksInline()) {
            assertEquals(Optional.empty(), underWith, "an inline Io runs an Io.with body on the caller's thread");
        } else {
            assertTrue(underWith.orElseThrow().isDone(), "a scheduling Io runs an Io.with body as a root task");
        }
        Future<Boolean> f = inIo(() -> Io.async(() -> {
            Future<?> self = Io.currentTask().orElseThrow();
            return !self.isDone();
        }));
        assertTrue((boolean) inIo(f::await));
        Future<Future<?>> selfReport =
                inIo(() -> Io.async(() -> Io.currentTask().orElseThrow()));
        assertSame(selfReport, inIo(selfReport::await));
    }

    @Test
    void bindingCallPassesUncheckedExceptionsAndWrapsCheckedOnes() {
        IllegalStateException unchecked = new IllegalStateException("u");
        assertSame(
                unchecked,
                assertThrows(
                        IllegalStateException.class,
                        () -> inIo(() -> {
                            throw unchecked;
                        })));
        IOException checked = new IOException("c");
        CompletionException e = assertThrows(
                CompletionException.class,
                () -> inIo(() -> {
                    throw checked;
                }));
        assertSame(checked, e.getCause());
    }

    /**
     * DESIGN §3.7: on a scheduling Io, an Io.with body from a plain thread is one of the Io's
     * tasks (its own thread, its own cancellation), and the caller waits for it; nested Io.with
     * of the same Io inside a task runs inline; an inline Io runs the body on the caller's thread.
     */
    @Test
    void withRunsItsBodyAsARootTaskOfASchedulingIo() {
        Thread caller = Thread.currentThread();
        Thread ranOn = inIo(Thread::currentThread);
        if (runsTasksInline()) {
            assertSame(caller, ranOn);
            return;
        }
        assertNotSame(caller, ranOn);
        boolean sameTaskInside = inIo(() -> {
            Future<?> outer = Io.currentTask().orElseThrow();
            return Io.with(io).call(() -> Io.currentTask().orElseThrow() == outer);
        });
        assertTrue(sameTaskInside, "Io.with of the same Io inside one of its tasks stays in that task");
    }

    @Test
    void theBindingEndsWithItsCall() {
        runInIo(() -> assertSame(io, Io.current()));
        assertSame(io, Io.with(io).io());
        assertTrue(!isBoundOutside(), "the binding leaked past its call");
    }

    private boolean isBoundOutside() {
        try {
            return Io.current() == io;
        } catch (IllegalStateException noDefaultIo) {
            return false;
        }
    }

    private static void closeIfCloseable(Io other) {
        if (other instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                throw new AssertionError("closing the second Io failed", e);
            }
        }
    }
}
