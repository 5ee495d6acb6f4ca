package io.weft.fiber;

import io.weft.Io;
import io.weft.protocol.AsyncAwaitContract;
import io.weft.protocol.BadInputContract;
import io.weft.protocol.CancellationContract;
import io.weft.protocol.ContextContract;
import io.weft.protocol.RaceContract;
import io.weft.protocol.RawOperationsContract;
import io.weft.protocol.ShieldContract;
import io.weft.protocol.SleepContract;
import org.junit.jupiter.api.Nested;

/** The whole conformance kit on FiberIo: 1 and 4 workers, real and virtual clock. */
class FiberIoConformanceTest {

    /** The kit on 1 worker, real clock. */
    @Nested
    class OneWorker {

        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }
    }

    /** The kit on 4 workers, real clock. */
    @Nested
    class FourWorkers {

        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }
        }
    }

    /** The kit on 1 worker, virtual clock. */
    @Nested
    class OneWorkerVirtualClock {

        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(1).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }
    }

    /** The kit on 4 workers, virtual clock. */
    @Nested
    class FourWorkersVirtualClock {

        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected Io newIo() {
                return FiberIo.builder().workers(4).virtualClock().build();
            }

            @Override
            protected boolean runsTasksInline() {
                return false;
            }

            @Override
            protected boolean hasVirtualClock() {
                return true;
            }
        }
    }
}
