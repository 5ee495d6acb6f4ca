package io.weft.reactive.tck;

/** {@link FromChannelTck} on BlockingIo. */
public class FromChannelOnBlockingIoTck extends FromChannelTck {
    public FromChannelOnBlockingIoTck() {
        super(TckIo.BLOCKING);
    }
}
