package io.weft.reactive.tck;

/** {@link ProduceTck} on FiberIo with two workers. */
public class ProduceOnFiberIoTck extends ProduceTck {
    public ProduceOnFiberIoTck() {
        super(TckIo.FIBER);
    }
}
