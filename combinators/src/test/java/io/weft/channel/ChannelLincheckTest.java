package io.weft.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.internal.Task;
import io.weft.modelcheck.ModelThreads;
import io.weft.modelcheck.ModelThreads.Round;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck for the Channel: its non-waiting operations are linearizable against a sequential
 * bounded queue ({@link Spec}), checked by model checking and by stress; its waiting operations
 * (send on a full channel, receive on an empty one, with and without a deadline, cancelled, woken
 * by a close) are explored interleaving by interleaving, where a lost wake-up is a hang that
 * Lincheck reports.
 *
 * <p>Why the waiting operations are not in the linearizability check: Lincheck's verifier has no
 * model for a Java operation that blocks its thread until another operation runs (it supports
 * that only for Kotlin suspend functions), and reports every scenario in which a receive has no
 * matching send as a hang. {@code receive(Duration.ZERO)}, the deadline form that never waits,
 * is in it.
 */
@Param(name = "item", gen = IntGen.class, conf = "1:9")
public class ChannelLincheckTest {
    private static final int CAPACITY = 2;

    private final Channel<Integer> channel = Channel.bounded(CAPACITY);

    /** Public for Lincheck, which creates one instance per scenario. */
    public ChannelLincheckTest() {}

    /** {@link Channel#trySend}: true, false (full) or "closed". */
    @Operation
    public Object trySend(@Param(name = "item") int item) {
        try {
            return channel.trySend(item);
        } catch (ChannelClosed closed) {
            return "closed";
        }
    }

    /** {@link Channel#tryReceive}: the item or null. */
    @Operation
    public Integer tryReceive() {
        return channel.tryReceive();
    }

    /** {@link Channel#receive(Duration)} with a zero timeout: the item, "timed out" or "closed". */
    @Operation
    public Object receiveNow() {
        try {
            return channel.receive(Duration.ZERO);
        } catch (TimedOut timedOut) {
            return "timed out";
        } catch (ChannelClosed closed) {
            return "closed";
        }
    }

    /** {@link Channel#close}. */
    @Operation
    public void close() {
        channel.close();
    }

    /** {@link Channel#isClosed}. */
    @Operation
    public boolean isClosed() {
        return channel.isClosed();
    }

    /** The sequential specification: a bounded FIFO queue that can be closed. */
    public static final class Spec {
        private final ArrayDeque<Integer> items = new ArrayDeque<>();
        private boolean closed;

        /** Public for Lincheck. */
        public Spec() {}

        public Object trySend(int item) {
            if (closed) {
                return "closed";
            }
            if (items.size() == CAPACITY) {
                return false;
            }
            items.addLast(item);
            return true;
        }

        public Integer tryReceive() {
            return items.pollFirst();
        }

        public Object receiveNow() {
            Integer item = items.pollFirst();
            if (item != null) {
                return item;
            }
            return closed ? "closed" : "timed out";
        }

        public void close() {
            closed = true;
        }

        public boolean isClosed() {
            return closed;
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void nonWaitingOperationsAreLinearizableUnderModelChecking() {
        ModelThreads.linearizableUnderModelChecking(ChannelLincheckTest.class, Spec.class, 30);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void nonWaitingOperationsAreLinearizableUnderStress() {
        ModelThreads.linearizableUnderStress(ChannelLincheckTest.class, Spec.class, 30);
    }

    // ------------------------------------------------------------ waiting operations, interleaved

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aWaitingReceiverGetsTheItemSentLater() {
        ModelThreads.explore(() -> {
            Channel<Integer> ch = Channel.bounded(1);
            int[] got = new int[1];
            return Round.of(
                    () -> {
                        assertEquals(7, got[0]);
                        assertNull(ch.tryReceive());
                    },
                    () -> got[0] = ch.receive(),
                    () -> ch.send(7));
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void twoWaitingReceiversAndTwoSendersLoseNothing() {
        ModelThreads.explore(() -> {
            Channel<Integer> ch = Channel.bounded(1);
            ConcurrentLinkedQueue<Integer> got = new ConcurrentLinkedQueue<>();
            return Round.of(
                    () -> {
                        assertEquals(List.of(1, 2), sorted(got));
                        assertNull(ch.tryReceive());
                    },
                    () -> got.add(ch.receive()),
                    () -> got.add(ch.receive()),
                    () -> {
                        ch.send(1);
                        ch.send(2);
                    });
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aSenderWaitingOnAFullChannelGetsInWhenAReceiverMakesRoom() {
        ModelThreads.explore(() -> {
            Channel<Integer> ch = Channel.bounded(1);
            ch.send(1);
            int[] got = new int[1];
            return Round.of(
                    () -> {
                        assertEquals(1, got[0], "FIFO: the buffered item first");
                        assertEquals(2, ch.tryReceive(), "the waiting sender's item is in");
                    },
                    () -> ch.send(2),
                    () -> got[0] = ch.receive());
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void closeWakesAWaitingReceiverAndAWaitingSender() {
        ModelThreads.explore(() -> {
            Channel<Integer> empty = Channel.bounded(1);
            List<Integer> undelivered = new ArrayList<>();
            Channel<Integer> full = Channel.bounded(1, undelivered::add);
            full.send(1);
            String[] outcome = new String[2];
            return Round.of(
                    () -> {
                        assertEquals("closed", outcome[0]);
                        assertEquals("closed", outcome[1]);
                        assertEquals(List.of(2), undelivered, "the waiting sender's item went to the hook");
                        assertEquals(1, full.tryReceive(), "what was buffered before the close still drains");
                    },
                    () -> {
                        try {
                            empty.receive();
                            outcome[0] = "received";
                        } catch (ChannelClosed e) {
                            outcome[0] = "closed";
                        }
                    },
                    () -> {
                        try {
                            full.send(2);
                            outcome[1] = "sent";
                        } catch (ChannelClosed e) {
                            outcome[1] = "closed";
                        }
                    },
                    () -> {
                        empty.close();
                        full.close();
                    });
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aReceiveWithADeadlineReturnsTheItemOrLeavesItInTheChannel() {
        ModelThreads.explore(() -> {
            Channel<Integer> ch = Channel.bounded(1);
            Object[] outcome = new Object[1];
            return Round.of(
                    () -> {
                        if (outcome[0] instanceof Integer item) {
                            assertEquals(5, item);
                            assertNull(ch.tryReceive());
                        } else {
                            assertEquals("timed out", outcome[0]);
                            assertEquals(5, ch.tryReceive(), "a timed-out receive consumed nothing");
                        }
                    },
                    () -> {
                        try {
                            outcome[0] = ch.receive(Duration.ofMillis(1));
                        } catch (TimedOut e) {
                            outcome[0] = "timed out";
                        }
                    },
                    () -> ch.send(5));
        });
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aCancelledReceiveConsumesNothingAndPassesItsWakeUpOn() {
        ModelThreads.explore(() -> {
            Channel<Integer> ch = Channel.bounded(1);
            ConcurrentLinkedQueue<Integer> taken = new ConcurrentLinkedQueue<>();
            Io io = Io.current();
            Task<Integer> cancelled = Task.spawned(io, () -> record(ch.receive(), taken));
            Task<Integer> other = Task.spawned(io, () -> record(ch.receive(), taken));
            boolean[] cancelReturned = new boolean[1];
            return Round.of(
                    () -> {
                        assertTrue(cancelled.isDone() && other.isDone(), cancelled + ", " + other);
                        if (cancelReturned[0]) {
                            assertEquals(Future.State.CANCELLED, cancelled.state());
                        }
                        // The second receiver ends with the item or, at the close, with ChannelClosed: it
                        // must not stay parked on a wake-up the cancelled one swallowed (that is a hang).
                        assertEquals(List.of(9), List.copyOf(taken), "the item was received exactly once");
                    },
                    cancelled::run,
                    other::run,
                    () -> cancelReturned[0] = cancelled.cancel(),
                    () -> {
                        ch.send(9);
                        ch.close();
                    });
        });
    }

    // ------------------------------------------------------------ select against plain operations

    /**
     * A select on {@code b} then {@code a} races a plain receiver on {@code a}: exactly one of them
     * takes a's item, and a wake-up the select took on {@code a} while committing {@code b} reaches
     * the plain receiver (a select that kept it would leave the receiver parked: a hang). A select
     * that took a's item puts a replacement in, so the receiver always has something to end with.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aSelectAndAPlainReceiverOnOneChannelCommitOnceAndLoseNoWakeUp() {
        ModelThreads.explore(() -> {
            Channel<Integer> a = Channel.bounded(2);
            Channel<Integer> b = Channel.bounded(1);
            String[] selected = new String[1];
            int[] plain = new int[1];
            return Round.of(
                    () -> {
                        if (selected[0].equals("b2")) {
                            assertEquals(1, plain[0], "the select took b: a's item is the receiver's");
                            assertNull(b.tryReceive());
                        } else {
                            assertEquals("a1", selected[0]);
                            assertEquals(9, plain[0], "the select took a's item: the receiver got the replacement");
                            assertEquals(2, b.tryReceive(), "the losing clause took nothing");
                        }
                        assertNull(a.tryReceive());
                    },
                    () -> {
                        selected[0] = Select.<String>ordered()
                                .onReceive(b, x -> "b" + x)
                                .onReceive(a, x -> "a" + x)
                                .select();
                        if (selected[0].startsWith("a")) {
                            a.send(9);
                        }
                    },
                    () -> plain[0] = a.receive(),
                    () -> {
                        b.send(2);
                        a.send(1);
                    });
        });
    }

    /**
     * The senders' side: a select sending to {@code b} or {@code a} races a plain sender waiting
     * for room in {@code a}, while a third thread makes room in both. Exactly one clause delivers,
     * and a wake-up for room in {@code a} that the select did not use reaches the plain sender.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void aSelectAndAPlainSenderOnOneChannelDeliverOnceAndLoseNoWakeUp() {
        ModelThreads.explore(() -> {
            Channel<Integer> a = Channel.bounded(1);
            Channel<Integer> b = Channel.bounded(1);
            a.send(0);
            b.send(0);
            String[] selected = new String[1];
            int[] takenBack = new int[1];
            int[] drained = new int[2];
            return Round.of(
                    () -> {
                        assertEquals(0, drained[0]);
                        assertEquals(0, drained[1]);
                        if (selected[0].equals("b")) {
                            assertEquals(2, b.tryReceive(), "the select's item is in b, once");
                        } else {
                            assertEquals("a", selected[0]);
                            assertEquals(1, takenBack[0], "the select's item went into a, once");
                            assertNull(b.tryReceive(), "the losing clause delivered nothing");
                        }
                        assertEquals(5, a.tryReceive(), "the plain sender got in");
                        assertNull(a.tryReceive());
                    },
                    () -> {
                        selected[0] = Select.<String>ordered()
                                .onSend(b, 2, () -> "b")
                                .onSend(a, 1, () -> "a")
                                .select();
                        if (selected[0].equals("a")) {
                            takenBack[0] = a.receive(); // room again for the plain sender
                        }
                    },
                    () -> a.send(5),
                    () -> {
                        drained[0] = b.receive();
                        drained[1] = a.receive();
                    });
        });
    }

    /** Notes {@code item} as taken out of the channel and returns it. */
    private static Integer record(Integer item, ConcurrentLinkedQueue<Integer> taken) {
        taken.add(item);
        return item;
    }

    private static List<Integer> sorted(ConcurrentLinkedQueue<Integer> items) {
        List<Integer> list = new ArrayList<>(items);
        list.sort(null);
        return list;
    }
}
