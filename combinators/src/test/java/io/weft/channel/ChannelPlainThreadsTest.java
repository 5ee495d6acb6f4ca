package io.weft.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Cancelled;
import io.weft.Io;
import io.weft.blocking.BlockingIo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The channel between plain platform threads under BlockingIo, where tasks run inline and real
 * concurrency comes from threads: waiting, the wake-up protocol and (a plain thread's
 * cancellation being an interrupt) cancellation safety.
 */
class ChannelPlainThreadsTest {
    private final Io io = BlockingIo.create();

    private Thread start(Runnable body) {
        return Thread.ofPlatform().start(() -> Io.with(io).run(body));
    }

    @Test
    void interruptedReceiveOnAPlainThreadConsumesNothing() throws InterruptedException {
        Channel<Integer> channel = Channel.bounded(1);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread receiver = start(() -> {
            try {
                outcome.set(channel.receive());
            } catch (RuntimeException e) {
                outcome.set(e);
            }
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> channel.waitingReceivers() == 1);
        receiver.interrupt();
        receiver.join();
        assertInstanceOf(Cancelled.class, outcome.get());
        assertEquals(0, channel.waitingReceivers());
        channel.send(3);
        assertEquals(3, channel.tryReceive());
    }

    @Test
    void interruptedSendOnAPlainThreadReportsItsItem() throws InterruptedException {
        List<Integer> undelivered = new CopyOnWriteArrayList<>();
        Channel<Integer> channel = Channel.bounded(1, undelivered::add);
        channel.send(1);
        Thread sender = start(() -> {
            try {
                channel.send(2);
            } catch (Cancelled expected) {
                // reported through the hook
            }
        });
        await().atMost(Duration.ofSeconds(20)).until(() -> channel.waitingSenders() == 1);
        sender.interrupt();
        sender.join();
        assertEquals(List.of(2), undelivered);
        assertEquals(1, channel.tryReceive());
        assertNull(channel.tryReceive());
    }

    @Test
    void threadsExchangeEveryItemExactlyOnce() throws Exception {
        int producers = 2;
        int consumers = 2;
        int perProducer = 20_000;
        Channel<Integer> channel = Channel.bounded(3);
        ConcurrentHashMap<Integer, Boolean> seen = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> sending = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int base = p * perProducer;
            sending.add(CompletableFuture.runAsync(
                    () -> Io.with(io).run(() -> {
                        for (int i = 0; i < perProducer; i++) {
                            channel.send(base + i);
                        }
                    }),
                    r -> Thread.ofPlatform().start(r)));
        }
        List<CompletableFuture<Integer>> receiving = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
            receiving.add(CompletableFuture.supplyAsync(
                    () -> Io.with(io).call(() -> {
                        int count = 0;
                        int[] last = new int[producers];
                        java.util.Arrays.fill(last, -1);
                        for (int x : channel) {
                            assertTrue(seen.putIfAbsent(x, true) == null, "duplicate " + x);
                            assertTrue(x % perProducer > last[x / perProducer], "out of order " + x);
                            last[x / perProducer] = x % perProducer;
                            count++;
                        }
                        return count;
                    }),
                    r -> Thread.ofPlatform().start(r)));
        }
        for (CompletableFuture<Void> f : sending) {
            f.get(30, TimeUnit.SECONDS);
        }
        channel.close();
        int total = 0;
        for (CompletableFuture<Integer> f : receiving) {
            total += f.get(30, TimeUnit.SECONDS);
        }
        assertEquals(producers * perProducer, total);
        assertEquals(producers * perProducer, seen.size());
        assertFalse(channel.iterator().hasNext());
    }
}
