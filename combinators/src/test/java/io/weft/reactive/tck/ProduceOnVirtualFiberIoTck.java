package io.weft.reactive.tck;

/** {@link ProduceTck} on FiberIo with two workers and a virtual clock. */
public class ProduceOnVirtualFiberIoTck extends ProduceTck {
    public ProduceOnVirtualFiberIoTck() {
        super(TckIo.FIBER_VIRTUAL);
    }
}
