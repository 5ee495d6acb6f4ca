package io.weft.reactive.tck;

/** {@link FromFutureTck} over a foreign CompletionStage that completes after the subscription, on FiberIo. */
public class FromStageOnFiberIoTck extends FromFutureTck {
    public FromStageOnFiberIoTck() {
        super(TckIo.FIBER, Made.FOREIGN_STAGE);
    }
}
