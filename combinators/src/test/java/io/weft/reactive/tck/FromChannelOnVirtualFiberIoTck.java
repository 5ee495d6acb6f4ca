package io.weft.reactive.tck;

/** {@link FromChannelTck} on FiberIo with two workers and a virtual clock. */
public class FromChannelOnVirtualFiberIoTck extends FromChannelTck {
    public FromChannelOnVirtualFiberIoTck() {
        super(TckIo.FIBER_VIRTUAL);
    }
}
