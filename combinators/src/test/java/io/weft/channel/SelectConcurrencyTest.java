package io.weft.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.weft.Future;
import io.weft.Io;
import io.weft.testing.Ios;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Selects on both ends of several channels, beside plain senders and receivers on the same
 * channels: every item is received exactly once, whichever clause or plain operation took it. A
 * select that committed two clauses would duplicate or lose an item; one that kept a wake-up it
 * did not use would leave a plain receiver or sender parked (the test would hang).
 */
class SelectConcurrencyTest {
    private static final int CHANNELS = 3;

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void selectsOnBothEndsLoseAndDuplicateNothing(Ios.Kind kind) {
        runMesh(kind, 4_000, 1);
    }

    @Tag("stress")
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void selectsOnBothEndsLoseAndDuplicateNothingUnderLoad(Ios.Kind kind) {
        runMesh(kind, 100_000, 4);
    }

    /**
     * Two selecting producers and one plain producer (on channel 1) each send {@code perProducer}
     * distinct items; two selecting consumers and one plain consumer (on channel 0) take them until
     * every channel is closed and drained.
     */
    private static void runMesh(Ios.Kind kind, int perProducer, int capacity) {
        int producers = 3;
        try (Ios.Opened opened = Ios.open(kind)) {
            List<List<Integer>> received = opened.call(() -> {
                List<Channel<Integer>> channels = new ArrayList<>();
                for (int c = 0; c < CHANNELS; c++) {
                    channels.add(Channel.bounded(capacity));
                }
                List<Future<Void>> sending = new ArrayList<>();
                for (int p = 0; p < 2; p++) {
                    int first = p * perProducer;
                    long seed = p;
                    sending.add(Io.async(() -> {
                        for (int i = first; i < first + perProducer; i++) {
                            Select<Void> send = Select.fair(seed * 1_000_003 + i);
                            for (Channel<Integer> channel : channels) {
                                send.onSend(channel, i, () -> null);
                            }
                            send.select();
                        }
                        return null;
                    }));
                }
                int plainFirst = 2 * perProducer;
                sending.add(Io.async(() -> {
                    for (int i = plainFirst; i < plainFirst + perProducer; i++) {
                        channels.get(1).send(i);
                    }
                    return null;
                }));
                List<Future<List<Integer>>> receiving = new ArrayList<>();
                for (int c = 0; c < 2; c++) {
                    long seed = 100 + c;
                    receiving.add(Io.async(() -> selectUntilAllEnded(channels, seed)));
                }
                receiving.add(Io.async(() -> {
                    List<Integer> got = new ArrayList<>();
                    for (int item : channels.get(0)) {
                        got.add(item);
                    }
                    return got;
                }));
                for (Future<Void> f : sending) {
                    f.await();
                }
                for (Channel<Integer> channel : channels) {
                    channel.close();
                }
                List<List<Integer>> out = new ArrayList<>();
                for (Future<List<Integer>> f : receiving) {
                    out.add(f.await());
                }
                return out;
            });
            BitSet seen = new BitSet();
            int total = 0;
            for (List<Integer> got : received) {
                for (int item : got) {
                    assertFalse(seen.get(item), "item " + item + " received twice");
                    seen.set(item);
                    total++;
                }
            }
            assertEquals(producers * perProducer, total, "items received of those sent");
            assertEquals(producers * perProducer, seen.cardinality());
        }
    }

    /** Receives with a fair select over the channels still open, until every one has ended. */
    private static List<Integer> selectUntilAllEnded(List<Channel<Integer>> channels, long seed) {
        List<Integer> got = new ArrayList<>();
        List<Channel<Integer>> open = new ArrayList<>(channels);
        Channel<?>[] ended = new Channel<?>[1];
        while (!open.isEmpty()) {
            Select<Integer> select = Select.fair(seed++);
            for (Channel<Integer> channel : open) {
                select.onReceive(channel, item -> item, () -> {
                    ended[0] = channel;
                    return null;
                });
            }
            // one select per round: the set of clauses changes when a channel ends
            for (Integer item = select.select(); item != null; item = select.select()) {
                got.add(item);
            }
            open.remove(ended[0]);
        }
        return got;
    }
}
