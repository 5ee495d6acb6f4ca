package io.weft.reactive.tck;

/** {@link FromFutureTck} over a pending task's future on FiberIo with a virtual clock. */
public class FromPendingFutureOnVirtualFiberIoTck extends FromFutureTck {
    public FromPendingFutureOnVirtualFiberIoTck() {
        super(TckIo.FIBER_VIRTUAL, Made.PENDING_TASK);
    }
}
