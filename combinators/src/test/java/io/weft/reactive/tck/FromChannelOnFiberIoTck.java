package io.weft.reactive.tck;

/** {@link FromChannelTck} on FiberIo with two workers. */
public class FromChannelOnFiberIoTck extends FromChannelTck {
    public FromChannelOnFiberIoTck() {
        super(TckIo.FIBER);
    }
}
