package io.weft.reactive.tck;

/** {@link FlowFromFutureTck} on FiberIo with two workers. */
public class FlowFromFutureOnFiberIoTck extends FlowFromFutureTck {
    public FlowFromFutureOnFiberIoTck() {
        super(TckIo.FIBER);
    }
}
