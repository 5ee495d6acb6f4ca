package io.weft.internal;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Future.State;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The {@link Cancelled} a suspend point throws: what its message says (the task as it was when
 * the signal was made, though the text is built only when read), its cause, its stack trace, and
 * its serialized form.
 */
class CancelSignalTest {
    /** A task that cancels itself and throws its signal, run to its end: the task, its signal, and its toString at the signal. */
    private record SelfCancelled(Task<String> task, Cancelled signal, String shownAtTheSignal) {
        static SelfCancelled run() {
            DeferredIo io = new DeferredIo();
            AtomicReference<Task<String>> self = new AtomicReference<>();
            AtomicReference<String> shown = new AtomicReference<>();
            AtomicReference<Cancelled> thrown = new AtomicReference<>();
            self.set(io.async(() -> {
                Task<String> me = self.get();
                me.requestCancel();
                shown.set(me.toString()); // no waiters: toString shows what the signal shows
                try {
                    me.throwIfCancelled();
                } catch (Cancelled c) {
                    thrown.set(c);
                    throw c;
                }
                return "not cancelled";
            }));
            io.runAll();
            assertNotNull(thrown.get(), "the suspend point threw nothing");
            return new SelfCancelled(self.get(), thrown.get(), shown.get());
        }
    }

    @Test
    void aTasksSignalShowsTheTaskAsItWasWhenTheSignalWasMadeEvenReadAfterTheTaskEnded() throws Exception {
        SelfCancelled run = SelfCancelled.run();
        Cancelled signal = run.signal();
        String shown = run.shownAtTheSignal();

        assertEquals(State.CANCELLED, run.task().state());
        assertTrue(shown.contains("cancelling"), shown);
        assertNotEquals(shown, run.task().toString(), "the task has moved on since");
        assertEquals(shown + " was cancelled", signal.getMessage());
        assertEquals(signal.getMessage(), signal.getMessage(), "read twice, the same text");
        assertEquals(0, signal.getStackTrace().length);
        assertTrue(signal.toString().endsWith(": " + signal.getMessage()), signal.toString());

        Cancelled copy = roundTrip(signal);
        assertEquals(signal.getMessage(), copy.getMessage(), "serialization keeps the text");
    }

    @Test
    void aSignalKeptAfterItsTaskEndedDoesNotKeepTheTaskReachable() {
        SelfCancelled run = SelfCancelled.run();
        WeakReference<Task<String>> task = new WeakReference<>(run.task());
        Cancelled signal = run.signal();
        run = null; // the signal alone is kept

        await().atMost(Duration.ofSeconds(10)).until(() -> {
            System.gc();
            return task.get() == null;
        });
        assertTrue(signal.getMessage().endsWith("was cancelled"), signal.getMessage());
    }

    @Test
    void aScopesSignalCarriesItsCauseAndSaysWhyWithoutAStackTrace() throws Exception {
        CancelScope scope = CancelScope.open(); // on this plain thread
        TimeoutException why = new TimeoutException("deadline passed");
        try {
            assertTrue(scope.cancel(why));
            Cancelled signal = assertThrows(Cancelled.class, CancelScope::throwIfPlainThreadCancelled);

            assertSame(why, signal.getCause());
            assertEquals("the scope around this code was cancelled: " + why, signal.getMessage());
            assertEquals(0, signal.getStackTrace().length, "control flow, as a task's signal");
            assertTrue(scope.wasDelivered());

            Cancelled copy = roundTrip(signal);
            assertEquals(signal.getMessage(), copy.getMessage());
            assertInstanceOf(TimeoutException.class, copy.getCause());
        } finally {
            scope.end();
        }
    }

    private static Cancelled roundTrip(Cancelled signal) throws IOException, ClassNotFoundException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(signal);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            return (Cancelled) in.readObject();
        }
    }
}
