package io.weft.combinators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.internal.Task;
import io.weft.modelcheck.ModelThreads;
import io.weft.modelcheck.ModelThreads.Round;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck for the Semaphore: tryAcquire, release and availablePermits are linearizable against a
 * counter ({@link Spec}); waiting acquires, woken by a release or cancelled while a release
 * grants them the permit, are explored interleaving by interleaving. {@link BrokenSemaphore}, a
 * copy that drops the permit a cancelled acquire was granted, shows the exploration catches that.
 */
public class SemaphoreLincheckTest {
    private final Semaphore semaphore = new Semaphore(1);

    /** Public for Lincheck, which creates one instance per scenario. */
    public SemaphoreLincheckTest() {}

    /** {@link Semaphore#tryAcquire}. */
    @Operation
    public boolean tryAcquire() {
        return semaphore.tryAcquire();
    }

    /** {@link Semaphore#release}. */
    @Operation
    public void release() {
        semaphore.release();
    }

    /** {@link Semaphore#availablePermits}. */
    @Operation
    public int availablePermits() {
        return semaphore.availablePermits();
    }

    /** The sequential specification: a permit counter. */
    public static final class Spec {
        private int permits = 1;

        /** Public for Lincheck. */
        public Spec() {}

        public boolean tryAcquire() {
            if (permits == 0) {
                return false;
            }
            permits--;
            return true;
        }

        public void release() {
            permits++;
        }

        public int availablePermits() {
            return permits;
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void nonWaitingOperationsAreLinearizableUnderModelChecking() {
        ModelThreads.linearizableUnderModelChecking(SemaphoreLincheckTest.class, Spec.class, 20);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void nonWaitingOperationsAreLinearizableUnderStress() {
        ModelThreads.linearizableUnderStress(SemaphoreLincheckTest.class, Spec.class, 20);
    }

    // ------------------------------------------------------------ waiting acquires, interleaved

    /** What the waiting scenarios need of a semaphore: the real one, or the broken copy. */
    private record Permits(Runnable acquire, Runnable release, IntSupplier available) {
        int availablePermits() {
            return available.getAsInt();
        }
    }

    private static Permits real(int permits) {
        Semaphore s = new Semaphore(permits);
        return new Permits(s::acquire, s::release, s::availablePermits);
    }

    private static Permits broken(int permits) {
        BrokenSemaphore s = new BrokenSemaphore(permits);
        return new Permits(s::acquire, s::release, s::availablePermits);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aWaitingAcquireIsWokenByRelease() {
        ModelThreads.explore(() -> {
            Permits s = real(0);
            boolean[] acquired = new boolean[2];
            return Round.of(
                    () -> {
                        assertTrue(acquired[0] && acquired[1]);
                        assertEquals(0, s.availablePermits());
                    },
                    () -> {
                        s.acquire().run();
                        acquired[0] = true;
                    },
                    () -> {
                        s.acquire().run();
                        acquired[1] = true;
                    },
                    () -> {
                        s.release().run();
                        s.release().run();
                    });
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aCancelledAcquireNeverKeepsOrLosesAPermit() {
        ModelThreads.explore(() -> cancelledAcquire(real(0)));
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void theBrokenCopyThatDropsAGrantedPermitIsCaught() {
        LincheckAssertionError caught = assertThrows(
                LincheckAssertionError.class, () -> ModelThreads.explore(() -> cancelledAcquire(broken(0))));
        assertTrue(caught.getMessage().contains("permit"), caught.getMessage());
    }

    /**
     * One acquire waits in a task that another thread cancels while a third releases one permit:
     * however they interleave, the permit ends up either held by the task (it acquired and then
     * released it in its body) or back in the semaphore, never lost and never counted twice.
     */
    private static Round cancelledAcquire(Permits s) {
        Io io = Io.current();
        int[] heldInBody = new int[1];
        Task<Void> waiter = Task.spawned(io, () -> {
            s.acquire().run();
            heldInBody[0]++;
            s.release().run();
            return null;
        });
        IntSupplier permits = s::availablePermits;
        return Round.of(
                () -> {
                    assertTrue(waiter.isDone(), waiter.toString());
                    assertTrue(waiter.state() != Future.State.FAILED, waiter.toString());
                    assertEquals(
                            1,
                            permits.getAsInt(),
                            "the released permit is back in the semaphore after " + waiter + " (it acquired "
                                    + heldInBody[0] + " time(s))");
                },
                waiter::run,
                waiter::cancel,
                s.release());
    }
}
