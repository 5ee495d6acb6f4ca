package io.weft.reactive.tck;

/** {@link FromFutureTck} over a foreign CompletionStage that completes after the subscription, on BlockingIo. */
public class FromStageOnBlockingIoTck extends FromFutureTck {
    public FromStageOnBlockingIoTck() {
        super(TckIo.BLOCKING, Made.FOREIGN_STAGE);
    }
}
