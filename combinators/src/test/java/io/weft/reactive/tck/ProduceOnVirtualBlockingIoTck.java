package io.weft.reactive.tck;

/** {@link ProduceTck} on BlockingIo with a virtual clock: the producer's thread takes turns in the Io's world. */
public class ProduceOnVirtualBlockingIoTck extends ProduceTck {
    public ProduceOnVirtualBlockingIoTck() {
        super(TckIo.BLOCKING_VIRTUAL);
    }
}
