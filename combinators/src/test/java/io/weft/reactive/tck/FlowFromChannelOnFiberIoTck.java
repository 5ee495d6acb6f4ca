package io.weft.reactive.tck;

/** {@link FlowFromChannelTck} on FiberIo with two workers. */
public class FlowFromChannelOnFiberIoTck extends FlowFromChannelTck {
    public FlowFromChannelOnFiberIoTck() {
        super(TckIo.FIBER);
    }
}
