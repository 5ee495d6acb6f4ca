package io.weft.channel;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * The Channel's wake-up flags are a Dekker protocol (DESIGN §5): the fast path writes the ring,
 * then reads the other side's "waiting" flag; a waiter raises the flag, then re-checks the ring.
 * At least one of them must see the other's write, else the waiter parks and nobody wakes it.
 * Drives the real {@link Ring} and {@link Waiters}; {@link ChannelWakeupFlagsMutantTest} runs the
 * same shape on an acquire/release copy to show that these tests can fail. Results: (the fast
 * path saw the flag, the waiter's re-check succeeded).
 */
public class ChannelWakeupFlagsTest {

    /** A producer's offer vs a receiver registering on an empty channel. */
    @JCStressTest
    @Description("Producer: offer, then read hasRecvWaiters. Receiver: raise hasRecvWaiters, then re-check (poll).")
    @Outcome(
            id = "0, 0",
            expect = FORBIDDEN,
            desc = "Lost wake-up: the producer saw no waiter and the receiver found no item: it parks forever.")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "The receiver parks; the producer wakes it.")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "The receiver's re-check took the item.")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "Both saw each other (a harmless extra wake-up).")
    @State
    public static class ReceiverSide {
        private final Ring<Integer> ring = new Ring<>(1);
        private final Waiters receivers = new Waiters();

        /**
         * The fast path of send.
         *
         * @param r the results
         */
        @Actor
        public void producer(II_Result r) {
            ring.offer(1);
            r.r1 = receivers.hasWaiters() ? 1 : 0;
        }

        /**
         * A receive that found the channel empty, registering.
         *
         * @param r the results
         */
        @Actor
        public void receiver(II_Result r) {
            receivers.announce();
            r.r2 = ring.poll() != null ? 1 : 0;
        }
    }

    /** A consumer's poll vs a sender registering on a full channel. */
    @JCStressTest
    @Description("Consumer: poll, then read hasSendWaiters. Sender: raise hasSendWaiters, then re-check (offer).")
    @Outcome(
            id = "0, 0",
            expect = FORBIDDEN,
            desc = "Lost wake-up: the consumer saw no waiter and the sender found no room: it parks forever.")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "The sender parks; the consumer wakes it.")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "The sender's re-check found room.")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "Both saw each other (a harmless extra wake-up).")
    @State
    public static class SenderSide {
        private final Ring<Integer> ring = new Ring<>(1);
        private final Waiters senders = new Waiters();

        /** Fills the one slot. */
        public SenderSide() {
            ring.offer(0);
        }

        /**
         * The fast path of receive.
         *
         * @param r the results
         */
        @Actor
        public void consumer(II_Result r) {
            ring.poll();
            r.r1 = senders.hasWaiters() ? 1 : 0;
        }

        /**
         * A send that found the channel full, registering.
         *
         * @param r the results
         */
        @Actor
        public void sender(II_Result r) {
            senders.announce();
            r.r2 = ring.offer(2) == Ring.Offer.ADDED ? 1 : 0;
        }
    }
}
