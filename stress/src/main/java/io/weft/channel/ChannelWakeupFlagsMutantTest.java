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
 * {@link ChannelWakeupFlagsTest.ReceiverSide}'s scenario on {@link MutantRing}, whose ring and flag
 * use release/acquire instead of volatile. "0, 0" is the lost wake-up that the real test forbids:
 * seeing it shows that test bites. Not a test of Weft's code.
 */
@JCStressTest
@Description("MUTANT (release/acquire) channel flags. Producer: offer, read flag. Receiver: raise flag, poll.")
@Outcome(
        id = "0, 0",
        expect = FORBIDDEN,
        desc = "MUTANT lost the wake-up (StoreLoad reordering): the real test's FORBIDDEN outcome is reachable.")
@Outcome(
        id = {"1, 0", "0, 1", "1, 1"},
        expect = ACCEPTABLE,
        desc = "At least one side saw the other.")
@State
public class ChannelWakeupFlagsMutantTest {
    private final MutantRing ring = new MutantRing(1);

    /**
     * The fast path of send.
     *
     * @param r the results
     */
    @Actor
    public void producer(II_Result r) {
        ring.offer(1);
        r.r1 = ring.hasWaiters() ? 1 : 0;
    }

    /**
     * A receive that found the channel empty, registering.
     *
     * @param r the results
     */
    @Actor
    public void receiver(II_Result r) {
        ring.announce();
        r.r2 = ring.poll() != null ? 1 : 0;
    }
}
