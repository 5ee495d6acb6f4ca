package io.weft.reactive.tck;

/** {@link FromFutureTck} over a task's future that is pending when the TCK subscribes (FiberIo, two workers). */
public class FromPendingFutureOnFiberIoTck extends FromFutureTck {
    public FromPendingFutureOnFiberIoTck() {
        super(TckIo.FIBER, Made.PENDING_TASK);
    }
}
