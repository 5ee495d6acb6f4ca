package io.weft.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * DESIGN §3.4: a shield defers cancellation (depth-counted, nested); when the outermost shield
 * exits a pending cancel takes effect at the next suspend point; an exception thrown inside a
 * shield is never replaced by {@code Cancelled}.
 */
public abstract class ShieldContract extends IoContract {

    /** For the test class of one Io implementation. */
    protected ShieldContract() {}

    /** Parks the current task until another thread readies the token published in {@code slot}. */
    private static void parkUntilReleased(AtomicReference<ParkToken> slot) {
        ParkToken park = ParkToken.create();
        slot.set(park);
        Io.current().suspendRaw(park);
    }

    @Test
    void aShieldDefersCancellationUntilItExits() {
        List<String> log = new CopyOnWriteArrayList<>();
        AtomicReference<ParkToken> release = new AtomicReference<>();
        Started<String> started = startElsewhere(() -> {
            Io.shield(() -> {
                parkUntilReleased(release);
                log.add("shielded park returned normally");
            });
            log.add("after the shield");
            try {
                Io.sleep(Duration.ofMillis(1));
                log.add("slept");
            } catch (Cancelled c) {
                log.add("cancelled at the next suspend point");
                throw c;
            }
            return "not cancelled";
        });
        started.awaitParked();
        started.future().cancel();
        io.ready(release.get()); // the cancel did not wake it: the shield holds it back
        awaitDone(started.future());
        assertEquals(
                List.of("shielded park returned normally", "after the shield", "cancelled at the next suspend point"),
                log);
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    @Test
    void aCancelDoesNotCutAShieldedSleepShort() {
        assumeFalse(hasVirtualClock(), "a virtual clock ends the sleep before a helper acts");
        AtomicLong slept = new AtomicLong(-1);
        Started<Void> started = startElsewhere(() -> {
            Io.shield(() -> {
                long start = Io.current().nowMs();
                Io.sleep(Duration.ofMillis(200));
                slept.set(Io.current().nowMs() - start);
            });
            return null;
        });
        started.awaitParked();
        started.future().cancel();
        awaitDone(started.future());
        assertTrue(slept.get() >= 200, "the shielded sleep was cut short: " + slept.get() + " ms");
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    @Test
    void nestedShieldsDeferUntilTheOutermostExits() {
        List<String> log = new CopyOnWriteArrayList<>();
        AtomicReference<ParkToken> release = new AtomicReference<>();
        Started<String> started = startElsewhere(() -> {
            Io.shield(() -> {
                Io.shield(() -> parkUntilReleased(release));
                log.add("inner shield exited");
                Io.sleep(Duration.ofMillis(1)); // still inside the outer shield: no throw
                log.add("slept inside the outer shield");
            });
            try {
                Io.sleep(Duration.ofMillis(1));
            } catch (Cancelled c) {
                log.add("cancelled after the outer shield");
                throw c;
            }
            return "not cancelled";
        });
        started.awaitParked();
        started.future().cancel();
        io.ready(release.get());
        awaitDone(started.future());
        assertEquals(
                List.of("inner shield exited", "slept inside the outer shield", "cancelled after the outer shield"),
                log);
    }

    @Test
    void anExceptionThrownInsideAShieldIsNeverReplacedByCancelled() {
        IllegalStateException failure = new IllegalStateException("commit failed");
        AtomicReference<ParkToken> release = new AtomicReference<>();
        AtomicReference<Throwable> fromShield = new AtomicReference<>();
        Started<Void> started = startElsewhere(() -> {
            try {
                Io.shield(() -> {
                    parkUntilReleased(release);
                    throw failure;
                });
            } catch (Throwable t) {
                fromShield.set(t);
                throw t;
            }
            return null;
        });
        started.awaitParked();
        started.future().cancel();
        io.ready(release.get());
        awaitDone(started.future());
        assertSame(failure, fromShield.get());
        assertEquals(Future.State.FAILED, started.future().state());
        assertSame(failure, started.future().exceptionNow());
    }

    @Test
    void aShieldLetsACancelledTaskSuspendDuringCleanup() {
        List<String> log = new CopyOnWriteArrayList<>();
        Started<Void> started = startElsewhere(() -> {
            try {
                return parkUntilCancelled();
            } finally {
                Io.shield(() -> {
                    Io.sleep(Duration.ofMillis(5)); // e.g. flushing a buffer on the way out
                    log.add("cleanup slept");
                });
            }
        });
        started.awaitParked();
        started.future().cancel();
        awaitDone(started.future());
        assertEquals(List.of("cleanup slept"), log);
        assertEquals(Future.State.CANCELLED, started.future().state());
    }

    @Test
    void aShieldReturnsItsBodysValue() {
        assertEquals(
                "inside", inIo(() -> Io.async(() -> Io.shield(() -> "inside")).await()));
    }

    @Test
    void theRunnableShieldRunsItsBody() {
        List<String> log = new CopyOnWriteArrayList<>();
        inIo(() -> Io.async(() -> {
                    Io.shield(() -> {
                        log.add("ran");
                    });
                    return null;
                })
                .await());
        assertEquals(List.of("ran"), log);
    }

    @Test
    void aShieldWrapsACheckedExceptionInCompletionException() {
        IOException io = new IOException("disk");
        CompletionException e = assertThrows(
                CompletionException.class,
                () -> inIo(() -> Io.shield(() -> {
                    throw io;
                })));
        assertSame(io, e.getCause());
    }

    @Test
    void aShieldOutsideAnyTaskSimplyRunsItsBody() {
        assertEquals(7, (int) Io.shield(() -> 7));
    }

    @Test
    void aShieldWithoutAPendingCancelChangesNothing() {
        Future<String> f = inIo(() -> Io.async(() -> {
            Io.shield(() -> Io.sleep(Duration.ofMillis(1)));
            Io.sleep(Duration.ofMillis(1));
            return "fine";
        }));
        assertEquals("fine", inIo(f::await));
    }
}
