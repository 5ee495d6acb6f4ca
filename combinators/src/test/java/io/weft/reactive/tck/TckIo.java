package io.weft.reactive.tck;

import io.weft.Io;
import io.weft.blocking.BlockingIo;
import io.weft.fiber.FiberIo;

/** The Ios that the publisher TCKs run on; each verification class opens one of its own. */
enum TckIo {
    /** Runs tasks inline: each subscription's producer gets a virtual thread of its own. */
    BLOCKING,
    /** Two workers: producers are fibers, and the TCK's request and cancel race them for real. */
    FIBER;

    Io open() {
        return switch (this) {
            case BLOCKING -> BlockingIo.create();
            case FIBER -> FiberIo.builder().workers(2).build();
        };
    }

    /** Returns an Io of this kind that refuses every task, or null if this kind cannot be closed. */
    Io openClosed() {
        return switch (this) {
            case BLOCKING -> null;
            case FIBER -> {
                FiberIo io = FiberIo.builder().workers(1).build();
                io.close();
                yield io;
            }
        };
    }
}
