package io.weft.reactive.tck;

/** {@link FromFutureTck} on FiberIo with two workers. */
public class FromFutureOnFiberIoTck extends FromFutureTck {
    public FromFutureOnFiberIoTck() {
        super(TckIo.FIBER);
    }
}
