package io.weft.fiber.sched;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class ParkerTest {

    /** Long enough that a park returning "by itself" within a test's timeout means a bug. */
    private static final long FOREVER = Long.MAX_VALUE;

    private final Parker parker = new Parker();

    @Test
    void unparkBeforeParkMakesParkReturnAtOnce() {
        parker.bind(Thread.currentThread());
        parker.unpark();

        parker.park(FOREVER); // hangs until the test's timeout if the notification was lost
    }

    @Test
    void unparkBeforeBindIsKeptForTheFirstPark() {
        parker.unpark();
        parker.bind(Thread.currentThread());

        parker.park(FOREVER);
    }

    @Test
    void unparkFromAnotherThreadWakesAParkedOwner() {
        AtomicInteger returns = new AtomicInteger();
        Thread owner = Thread.ofPlatform().name("owner").unstarted(() -> {
            parker.park(FOREVER);
            returns.incrementAndGet();
        });
        parker.bind(owner);
        owner.start();
        awaitParked(owner);
        assertEquals(0, returns.get());

        parker.unpark();

        join(owner);
        assertEquals(1, returns.get());
    }

    @Test
    void notificationsDoNotAccumulate() {
        parker.unpark();
        parker.unpark();
        parker.unpark();
        AtomicInteger parksReturned = new AtomicInteger();
        Thread owner = Thread.ofPlatform().name("owner").unstarted(() -> {
            parker.park(FOREVER); // consumes the one pending notification
            parksReturned.incrementAndGet();
            parker.park(FOREVER); // must block: three unparks released one park, not three
            parksReturned.incrementAndGet();
        });
        parker.bind(owner);
        owner.start();

        awaitParked(owner);
        assertEquals(1, parksReturned.get());
        parker.unpark();
        join(owner);
        assertEquals(2, parksReturned.get());
    }

    @Test
    void parkWithASmallTimeoutReturnsByItself() {
        parker.bind(Thread.currentThread());

        parker.park(TimeUnit.MILLISECONDS.toNanos(1));
        parker.park(0);
        parker.park(-1);

        // The timeouts left no notification behind, and the parker still works.
        parker.unpark();
        parker.park(FOREVER);
    }

    @Test
    void onlyTheBoundOwnerMayPark() {
        assertThrows(IllegalStateException.class, () -> parker.park(1), "park before bind");
        Thread other = Thread.ofPlatform().unstarted(() -> {});
        parker.bind(other);

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> parker.park(1));
        assertTrue(e.getMessage().contains(other.getName()), e.getMessage());
    }

    @Test
    void bindAcceptsOneOwnerOnce() {
        assertThrows(NullPointerException.class, () -> parker.bind(null));
        parker.bind(Thread.currentThread());

        assertThrows(IllegalStateException.class, () -> parker.bind(Thread.currentThread()));
    }

    /**
     * Two threads hand a ball back and forth; each waits for its turn by parking, and only the
     * other thread's unpark can end that wait. A lost wake-up leaves a thread parked until its
     * 5 s timeout with its turn still not come: counted, and asserted to be zero.
     */
    @Test
    void pingPongNeverLosesAWakeUp() {
        int rounds = 20_000;
        long timeoutNanos = TimeUnit.SECONDS.toNanos(5);
        Parker ping = new Parker();
        Parker pong = new Parker();
        AtomicInteger turn = new AtomicInteger(); // 0: ping's turn, 1: pong's turn
        AtomicInteger timedOut = new AtomicInteger();
        AtomicLong parks = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();

        Thread pinger = Thread.ofPlatform()
                .name("ping")
                .unstarted(() -> guard(failure, () -> {
                    for (int round = 0; round < rounds; round++) {
                        waitForTurn(() -> turn.get() == 0, ping, timeoutNanos, timedOut, parks);
                        turn.set(1);
                        pong.unpark();
                    }
                }));
        Thread ponger = Thread.ofPlatform()
                .name("pong")
                .unstarted(() -> guard(failure, () -> {
                    for (int round = 0; round < rounds; round++) {
                        waitForTurn(() -> turn.get() == 1, pong, timeoutNanos, timedOut, parks);
                        turn.set(0);
                        ping.unpark();
                    }
                }));
        ping.bind(pinger);
        pong.bind(ponger);
        pinger.start();
        ponger.start();
        join(pinger);
        join(ponger);

        assertNull(failure.get());
        assertEquals(0, timedOut.get(), "rounds that waited for a park timeout: lost wake-ups");
        assertEquals(0, turn.get(), "every round completed");
        assertTrue(parks.get() > 0, "the threads parked");
    }

    private static void waitForTurn(
            BooleanSupplier myTurn, Parker parker, long timeoutNanos, AtomicInteger timedOut, AtomicLong parks) {
        while (!myTurn.getAsBoolean()) {
            long start = System.nanoTime();
            parker.park(timeoutNanos);
            parks.incrementAndGet();
            if (!myTurn.getAsBoolean() && System.nanoTime() - start >= timeoutNanos) {
                timedOut.incrementAndGet();
            }
        }
    }

    private void awaitParked(Thread owner) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> LockSupport.getBlocker(owner) == parker && owner.getState() == Thread.State.TIMED_WAITING);
    }

    private static void join(Thread thread) {
        try {
            assertTrue(thread.join(Duration.ofSeconds(50)), thread.getName() + " did not finish");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void guard(AtomicReference<Throwable> failure, Runnable body) {
        try {
            body.run();
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
    }
}
