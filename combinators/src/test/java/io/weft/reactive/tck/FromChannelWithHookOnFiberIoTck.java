package io.weft.reactive.tck;

import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link FromChannelTck} for the two-argument {@code fromChannel(channel, onUndelivered)} on
 * FiberIo: the hook sees the items a cancel caught between receive and emit.
 */
public class FromChannelWithHookOnFiberIoTck extends FromChannelTck {
    /** How many items the hook got, across the class (the TCK cancels many subscriptions). */
    static final AtomicLong UNDELIVERED = new AtomicLong();

    public FromChannelWithHookOnFiberIoTck() {
        super(TckIo.FIBER, item -> UNDELIVERED.incrementAndGet());
    }
}
