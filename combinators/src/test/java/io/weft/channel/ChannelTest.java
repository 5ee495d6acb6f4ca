package io.weft.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Io;
import io.weft.testing.Ios;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Channel behaviour that needs no concurrency, run on every Io (under BlockingIo a task runs
 * inline, so nothing here may wait for another task).
 */
class ChannelTest {

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void itemsComeOutInTheOrderTheyWereSent(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Integer> received = opened.call(() -> {
                Channel<Integer> channel = Channel.bounded(8);
                Io.async(() -> {
                            for (int i = 0; i < 8; i++) {
                                channel.send(i);
                            }
                            channel.close();
                            return null;
                        })
                        .await();
                List<Integer> out = new ArrayList<>();
                for (int item : channel) {
                    out.add(item);
                }
                return out;
            });
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), received);
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void trySendRefusesWhenFullAndTryReceiveReturnsNullWhenEmpty(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> channel = Channel.bounded(3);
                assertNull(channel.tryReceive());
                assertTrue(channel.trySend("a"));
                assertTrue(channel.trySend("b"));
                assertTrue(channel.trySend("c"));
                assertFalse(channel.trySend("d"), "capacity 3 holds exactly 3 items");
                assertEquals("a", channel.tryReceive());
                assertTrue(channel.trySend("d"));
                assertEquals("b", channel.receive());
                assertEquals("c", channel.tryReceive());
                assertEquals("d", channel.tryReceive());
                assertNull(channel.tryReceive());
                return null;
            });
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5, 7, 1024})
    void capacityIsExactlyWhatWasAskedFor(int capacity) {
        Channel<Integer> channel = Channel.bounded(capacity);
        assertEquals(capacity, channel.capacity());
        for (int i = 0; i < capacity; i++) {
            assertTrue(channel.trySend(i), "item " + i);
        }
        assertFalse(channel.trySend(-1));
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 5})
    void ringStaysFifoOverManyLaps(int capacity) {
        Channel<Integer> channel = Channel.bounded(capacity);
        int next = 0;
        int expected = 0;
        for (int round = 0; round < 1000; round++) {
            int burst = 1 + round % capacity;
            for (int i = 0; i < burst; i++) {
                assertTrue(channel.trySend(next++));
            }
            for (int i = 0; i < burst; i++) {
                assertEquals(expected++, channel.tryReceive());
            }
            assertNull(channel.tryReceive());
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void closedChannelDrainsBufferedItemsThenReceiveThrows(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<Integer> channel = Channel.bounded(4);
                channel.send(1);
                channel.send(2);
                channel.close();
                assertTrue(channel.isClosed());
                assertEquals(1, channel.receive());
                assertEquals(2, channel.tryReceive());
                ChannelClosed closed = assertThrows(ChannelClosed.class, channel::receive);
                assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
                assertNull(channel.tryReceive());
                assertThrows(ChannelClosed.class, channel::receive, "stays closed");
                return null;
            });
        }
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void sendAfterCloseThrowsAndReportsTheItemUndelivered(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            List<Integer> undelivered = new CopyOnWriteArrayList<>();
            opened.call(() -> {
                Channel<Integer> channel = Channel.bounded(2, undelivered::add);
                channel.send(1);
                channel.close();
                channel.close(); // harmless
                assertThrows(ChannelClosed.class, () -> channel.send(2));
                assertThrows(ChannelClosed.class, () -> channel.trySend(3));
                assertEquals(1, channel.receive(), "a buffered item is not undelivered");
                return null;
            });
            assertEquals(List.of(2, 3), undelivered);
        }
    }

    @Test
    void aFailingHookIsSuppressedIntoTheClosedSignal() {
        Channel<Integer> channel = Channel.bounded(1, item -> {
            throw new IllegalArgumentException("hook " + item);
        });
        channel.close();
        ChannelClosed closed = assertThrows(ChannelClosed.class, () -> channel.send(9));
        assertEquals(1, closed.getSuppressed().length);
        assertEquals("hook 9", closed.getSuppressed()[0].getMessage());
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void iterationReceivesUntilClosedAndDrained(Ios.Kind kind) {
        try (Ios.Opened opened = Ios.open(kind)) {
            opened.call(() -> {
                Channel<String> channel = Channel.bounded(3);
                channel.send("x");
                channel.send("y");
                channel.close();
                Iterator<String> it = channel.iterator();
                assertTrue(it.hasNext());
                assertTrue(it.hasNext(), "hasNext keeps the item it received");
                assertEquals("x", it.next());
                assertEquals("y", it.next());
                assertFalse(it.hasNext());
                assertThrows(NoSuchElementException.class, it::next);
                return null;
            });
        }
    }

    @Test
    void nullItemsAreRejected() {
        Channel<String> channel = Channel.bounded(1);
        assertEquals(
                "item",
                assertThrows(NullPointerException.class, () -> channel.send(null))
                        .getMessage());
        assertEquals(
                "item",
                assertThrows(NullPointerException.class, () -> channel.trySend(null))
                        .getMessage());
        assertNull(channel.tryReceive(), "nothing was enqueued");
    }

    @Test
    void badCapacityOrHookIsRejected() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> Channel.bounded(0));
        assertTrue(zero.getMessage().contains("capacity"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Channel.bounded(-5));
        // "unbounded" written as the largest int used to fail with the JVM's OutOfMemoryError
        IllegalArgumentException huge =
                assertThrows(IllegalArgumentException.class, () -> Channel.bounded(Integer.MAX_VALUE));
        assertTrue(huge.getMessage().contains("at most " + (Integer.MAX_VALUE - 8)), huge.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Channel.bounded(0, item -> {}));
        assertEquals(
                "onUndelivered",
                assertThrows(NullPointerException.class, () -> Channel.bounded(1, null))
                        .getMessage());
    }
}
