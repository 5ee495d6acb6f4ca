package io.weft.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Future;
import io.weft.Io;
import io.weft.combinators.RetryPolicy;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Processes under concurrent senders, with a shutdown landing in the middle: every message a send
 * delivered is either handled or handed to the dead letters, exactly once; a send that did not
 * deliver threw {@link ProcessNotFound}. A run started twice for one process shows as two handlers
 * inside at once; a lost run leaves delivered messages neither handled nor dead (the count is
 * short); a message drained twice is counted twice.
 */
class ProcessesConcurrencyTest {

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void aShutdownAmidSendsLosesAndDuplicatesNothing(Ios.Kind kind) {
        for (int round = 0; round < 20; round++) {
            runRound(kind, 4, 500, round);
        }
    }

    @Tag("stress")
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#concurrent")
    void aShutdownAmidSendsLosesAndDuplicatesNothingUnderLoad(Ios.Kind kind) {
        for (int round = 0; round < 300; round++) {
            runRound(kind, 8, 2_000, round);
        }
    }

    private static void runRound(Ios.Kind kind, int senders, int each, int round) {
        AtomicLong handled = new AtomicLong();
        AtomicLong dead = new AtomicLong();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicIntegerArray inside = new AtomicIntegerArray(3); // per process: handlers running now
        try (Ios.Opened opened = Ios.open(kind)) {
            long delivered = opened.call(() -> {
                Processes processes = Processes.builder()
                        .deadLetters(letter -> dead.incrementAndGet())
                        .onFailure((pid, failure) -> {})
                        .build();
                Mailbox mailbox = round % 2 == 0 ? Mailbox.unbounded() : Mailbox.bounded(8);
                List<Pid<Integer>> pids = new ArrayList<>();
                for (int p = 0; p < 3; p++) {
                    int index = p;
                    pids.add(processes.spawn(
                            "p" + p, mailbox, RetryPolicy.builder().build(), () -> (self, m) -> {
                                if (inside.incrementAndGet(index) > 1) {
                                    overlaps.incrementAndGet();
                                }
                                handled.incrementAndGet();
                                try {
                                    Io.yield(); // inside a handler when the shutdown lands, as often as not
                                } finally {
                                    inside.decrementAndGet(index);
                                }
                            }));
                }
                List<Future<Long>> sending = new ArrayList<>();
                for (int s = 0; s < senders; s++) {
                    Pid<Integer> to = pids.get(s % pids.size());
                    sending.add(Io.async(() -> {
                        long ok = 0;
                        for (int i = 0; i < each; i++) {
                            try {
                                processes.send(to, i);
                                ok++;
                            } catch (ProcessNotFound ended) {
                                return ok;
                            }
                        }
                        return ok;
                    }));
                }
                // shut down mid-stream: once some messages are handled, while senders still send
                long some = (long) senders * each / (2 + round % 3);
                while (handled.get() < some) {
                    Io.sleep(Duration.ofMillis(1));
                }
                List<Pid<?>> notEnded = processes.shutdown(Duration.ofSeconds(20));
                assertTrue(notEnded.isEmpty(), "not ended: " + notEnded);
                for (int p = 0; p < 3; p++) {
                    assertEquals(0, inside.get(p), "process " + p + " ended with its handler still running");
                }
                long total = 0;
                for (Future<Long> f : sending) {
                    total += f.await();
                }
                return total;
            });
            assertEquals(delivered, handled.get() + dead.get(), "round " + round + ": delivered = handled + dead");
            assertEquals(0, overlaps.get(), "round " + round + ": one process ran two handlers at once");
        }
    }
}
