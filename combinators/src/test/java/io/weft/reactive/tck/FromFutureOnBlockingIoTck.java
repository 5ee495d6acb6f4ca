package io.weft.reactive.tck;

/** {@link FromFutureTck} on BlockingIo. */
public class FromFutureOnBlockingIoTck extends FromFutureTck {
    public FromFutureOnBlockingIoTck() {
        super(TckIo.BLOCKING);
    }
}
