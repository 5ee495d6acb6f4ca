package io.weft.reactive.tck;

/** {@link FlowProduceTck} on FiberIo with two workers. */
public class FlowProduceOnFiberIoTck extends FlowProduceTck {
    public FlowProduceOnFiberIoTck() {
        super(TckIo.FIBER);
    }
}
