package io.weft.reactive.tck;

/** {@link FlowFromChannelTck} on BlockingIo. */
public class FlowFromChannelOnBlockingIoTck extends FlowFromChannelTck {
    public FlowFromChannelOnBlockingIoTck() {
        super(TckIo.BLOCKING);
    }
}
