package io.weft.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Wake-ups that meet a slot claimed but not yet published, driven step by step with the ring's
 * test seam on plain threads (the default BlockingIo), so the narrow window is hit every time.
 */
class ChannelWakeUpChainTest {
    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private static Thread receiverInto(Channel<Integer> channel, Set<Object> got) {
        return Thread.ofPlatform().daemon().start(() -> {
            try {
                got.add(channel.receive());
            } catch (ChannelClosed closed) {
                got.add("closed");
            }
        });
    }

    @Test
    void aWakeUpSpentOnAnUnpublishedSlotIsPassedOn() throws InterruptedException {
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch publish = new CountDownLatch(1);
        Channel<Integer> channel = new Channel<>(2, item -> {}, position -> {
            if (position == 0) {
                claimed.countDown();
                awaitQuietly(publish);
            }
        });
        Set<Object> got = ConcurrentHashMap.newKeySet();
        Thread r1 = receiverInto(channel, got);
        await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 1);
        Thread r2 = receiverInto(channel, got);
        await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 2);
        Thread slowProducer = Thread.ofPlatform().daemon().start(() -> channel.send(0)); // pauses after claiming 0
        assertEquals(true, claimed.await(20, TimeUnit.SECONDS));
        channel.send(1); // publishes position 1 and wakes r1, which finds position 0 unpublished
        await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 2); // r1 parked again
        publish.countDown(); // position 0 published: wakes r2; r2's take must pass the wake-up on
        slowProducer.join(PATIENCE.toMillis());
        r1.join(PATIENCE.toMillis());
        r2.join(PATIENCE.toMillis());
        assertEquals(Set.of(0, 1), got, "a receiver slept next to a buffered item");
    }

    @Test
    void everyParkedReceiverSeesACloseThatRacedAnUnpublishedSend() throws InterruptedException {
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch publish = new CountDownLatch(1);
        Channel<Integer> channel = new Channel<>(2, item -> {}, position -> {
            claimed.countDown();
            awaitQuietly(publish);
        });
        Set<Object> got = ConcurrentHashMap.newKeySet();
        Thread r1 = receiverInto(channel, got);
        await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 1);
        Thread r2 = receiverInto(channel, got);
        await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 2);
        Thread sender = Thread.ofPlatform().daemon().start(() -> channel.send(7)); // pauses after claiming
        assertEquals(true, claimed.await(20, TimeUnit.SECONDS));
        channel.close(); // the send claimed before the close: its item still drains
        await().atMost(PATIENCE).until(() -> channel.waitingReceivers() == 2); // both back asleep
        publish.countDown();
        sender.join(PATIENCE.toMillis());
        r1.join(PATIENCE.toMillis());
        r2.join(PATIENCE.toMillis());
        assertEquals(Set.of(7, "closed"), got, "one receiver got the item, the other the end of the stream");
        assertThrows(ChannelClosed.class, channel::receive);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
