package io.weft.reactive.tck;

/** {@link ProduceTck} on BlockingIo. */
public class ProduceOnBlockingIoTck extends ProduceTck {
    public ProduceOnBlockingIoTck() {
        super(TckIo.BLOCKING);
    }
}
