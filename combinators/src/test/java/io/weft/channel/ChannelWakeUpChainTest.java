package io.weft.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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

    /**
     * A channel of capacity 2 whose send that claims position 0 counts down {@code claimed}, then
     * waits for {@code publish} before it publishes.
     */
    private static Channel<Integer> pausingTheFirstSend(CountDownLatch claimed, CountDownLatch publish) {
        return new Channel<>(2, item -> {}, position -> {
            if (position == 0) {
                claimed.countDown();
                awaitQuietly(publish);
            }
        });
    }

    @Test
    void aWakeUpSpentOnAnUnpublishedSlotIsPassedOn() throws InterruptedException {
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch publish = new CountDownLatch(1);
        Channel<Integer> channel = pausingTheFirstSend(claimed, publish);
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
    /**
     * A select's timeout used to commit after plain, unsettled looks: with a send paused between
     * its claim of position 0 and its publish, a finished send's item at position 1 was in the
     * channel, and a select with a zero timeout still timed out. Now its last look is settled, as
     * a timed receive's is: it waits out the paused send and takes the item at the head.
     */
    @Test
    void aSelectDoesNotTimeOutWhileAFinishedSendsItemIsInTheChannel() throws InterruptedException {
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch publish = new CountDownLatch(1);
        Channel<Integer> channel = pausingTheFirstSend(claimed, publish);
        Thread slowProducer = Thread.ofPlatform().daemon().start(() -> channel.send(0)); // pauses after claiming 0
        assertEquals(true, claimed.await(20, TimeUnit.SECONDS));
        channel.send(1); // finished: its item is in the channel
        AtomicReference<Object> chosen = new AtomicReference<>();
        Thread selecting = Thread.ofPlatform()
                .daemon()
                .start(() -> chosen.set(Select.<Object>ordered()
                        .onReceive(channel, item -> item)
                        .onTimeout(Duration.ZERO, () -> "timed out")
                        .select()));
        try {
            // until it has chosen (the bug) or waits for position 0 to be published (the settled look)
            await().atMost(PATIENCE)
                    .until(() -> chosen.get() != null
                            || Arrays.stream(selecting.getStackTrace())
                                    .anyMatch(frame -> frame.getMethodName().equals("pollSettled")));
        } finally {
            publish.countDown(); // whatever happened: no thread is left spinning
        }
        selecting.join(PATIENCE.toMillis());
        slowProducer.join(PATIENCE.toMillis());
        assertEquals(0, chosen.get(), "the select timed out with items in the channel");
        assertEquals(1, channel.tryReceive());
    }
}
