package io.weft.reactive.tck;

/** {@link FlowProduceTck} on BlockingIo. */
public class FlowProduceOnBlockingIoTck extends FlowProduceTck {
    public FlowProduceOnBlockingIoTck() {
        super(TckIo.BLOCKING);
    }
}
