package io.weft.reactive.tck;

import io.weft.Io;
import io.weft.blocking.BlockingIo;
import io.weft.fiber.FiberIo;

/** The Ios that the publisher TCKs run on; each verification class opens one of its own. */
enum TckIo {
    /** Runs tasks inline: each subscription's producer gets a virtual thread of its own. */
    BLOCKING,
    /** Two workers: producers are fibers, and the TCK's request and cancel race them for real. */
    FIBER,
    /** BlockingIo with a virtual clock: a producer's thread takes turns in the Io's world. */
    BLOCKING_VIRTUAL,
    /** Two workers and a virtual clock. */
    FIBER_VIRTUAL;

    Io open() {
        return switch (this) {
            case BLOCKING -> BlockingIo.create();
            case FIBER -> FiberIo.builder().workers(2).build();
            case BLOCKING_VIRTUAL -> BlockingIo.builder().virtualClock().build();
            case FIBER_VIRTUAL -> FiberIo.builder().workers(2).virtualClock().build();
        };
    }

    /**
     * Calls {@code factory} with a new Io of this kind installed, then closes that Io, so what the
     * factory made is bound to an Io that refuses every task; returns null if this kind cannot be
     * closed. (A closed FiberIo cannot be installed: Io.with runs its body as a root task.)
     */
    <P> P madeThenClosed(java.util.concurrent.Callable<P> factory) {
        return switch (this) {
            case BLOCKING, BLOCKING_VIRTUAL -> null;
            case FIBER, FIBER_VIRTUAL -> {
                FiberIo io = FiberIo.builder().workers(1).build();
                P made = io.call(factory);
                io.close();
                yield made;
            }
        };
    }
}
