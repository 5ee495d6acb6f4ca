package io.weft.reactive.tck;

/** {@link FlowFromFutureTck} on BlockingIo. */
public class FlowFromFutureOnBlockingIoTck extends FlowFromFutureTck {
    public FlowFromFutureOnBlockingIoTck() {
        super(TckIo.BLOCKING);
    }
}
