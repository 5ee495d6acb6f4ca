package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * DESIGN §3.8: bad input gets a clear exception at the call site, naming the argument, and never
 * corrupts the runtime: the Io works normally afterwards.
 */
public abstract class BadInputContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected BadInputContract() {}

    private static void assertNpeNaming(String argument, Executable call) {
        NullPointerException e = assertThrows(NullPointerException.class, call);
        assertEquals(argument, e.getMessage(), "the NPE names the argument");
    }

    private void assertIoStillWorks() {
        assertEquals(
                "still fine",
                inIo(() -> Io.async(() -> {
                            Io.sleep(Duration.ofMillis(1));
                            return "still fine";
                        })
                        .await()));
    }

    @Test
    void nullBodiesAreRejectedByName() {
        assertNpeNaming("body", () -> inIo(() -> Io.async(null)));
        assertNpeNaming("body", () -> Io.shield((Callable<?>) null));
        assertNpeNaming("body", () -> Io.shield((Runnable) null));
        assertNpeNaming("body", () -> Io.with(io).run(null));
        assertNpeNaming("body", () -> Io.with(io).call(null));
        assertIoStillWorks();
    }

    @Test
    void aNullIoIsRejectedByName() {
        assertNpeNaming("io", () -> Io.with(null));
    }

    @Test
    void nullRaceInputsAreRejectedByName() {
        Future<String> ok = Future.completed("ok");
        assertNpeNaming("a", () -> inIo(() -> Io.race(null, ok)));
        assertNpeNaming("b", () -> inIo(() -> Io.race(ok, null)));
        assertNpeNaming("a", () -> inIo(() -> Io.raceAndJoin(null, ok)));
        assertIoStillWorks();
    }

    @Test
    void nullDurationsAreRejectedByName() {
        assertNpeNaming("duration", () -> runInIo(() -> Io.sleep(null)));
        assertNpeNaming("timeout", () -> inIo(() -> Future.completed(1).await(null)));
        assertIoStillWorks();
    }

    @Test
    void nullFactoryArgumentsAreRejectedByName() {
        assertNpeNaming("stage", () -> Future.from(null));
        assertNpeNaming("failure", () -> Future.failed(null));
        assertNpeNaming("action", () -> Future.completed(1).onDone(null));
    }

    @Test
    void nullRawArgumentsAreRejectedByName() {
        assertNpeNaming("task", () -> io.spawnRaw(null));
        assertNpeNaming("park", () -> io.suspendRaw(null));
        assertNpeNaming("park", () -> io.ready(null));
        assertNpeNaming("park", () -> io.armTimer(io.nowMs() + 10, null));
        assertIoStillWorks();
    }

    @Test
    void aFutureNotMadeByWeftIsRejectedByRace() {
        Future<String> foreign = new ForeignFuture();
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> inIo(() -> Io.race(foreign, Future.completed("ok"))));
        assertTrue(e.getMessage().contains("not a Future made by Weft"), e.getMessage());
        assertIoStillWorks();
    }

    @Test
    void aFinishedTaskCannotBeRunAgain() {
        Future<String> f = inIo(() -> Io.async(() -> "once"));
        awaitDone(f);
        assertThrows(IllegalStateException.class, ((io.weft.RawTask) f)::run);
        assertEquals("once", f.resultNow());
        assertIoStillWorks();
    }

    @Test
    void parkingOnAnotherTasksTokenIsRejected() {
        ParkToken outside = ParkToken.create();
        Future<String> f = inIo(() -> Io.async(() -> {
            try {
                Io.current().suspendRaw(outside);
                return "parked";
            } catch (IllegalStateException e) {
                return "rejected";
            }
        }));
        assertEquals(
                "rejected",
                inIo(f::await),
                "a token made outside the task (inline: another task; else another thread)");
        assertIoStillWorks();
    }

    @Test
    void aNegativeTimeoutOnlyLooks() {
        Future<String> pending = Future.from(new CompletableFuture<String>());
        assertThrows(io.weft.TimedOut.class, () -> inIo(() -> pending.await(Duration.ofMillis(-1))));
        assertIoStillWorks();
    }

    /** A Future that Weft did not make. */
    private static final class ForeignFuture implements Future<String> {
        @Override
        public String await() {
            return "foreign";
        }

        @Override
        public String await(Duration timeout) {
            return "foreign";
        }

        @Override
        public boolean cancel() {
            return false;
        }

        @Override
        public boolean isDone() {
            return true;
        }

        @Override
        public State state() {
            return State.SUCCESS;
        }

        @Override
        public String resultNow() {
            return "foreign";
        }

        @Override
        public Throwable exceptionNow() {
            throw new IllegalStateException();
        }

        @Override
        public io.weft.Registration onDone(Runnable action) {
            action.run();
            return () -> {};
        }

        @Override
        public CompletableFuture<String> toCompletableFuture() {
            return CompletableFuture.completedFuture("foreign");
        }
    }
}
