package io.weft.fiber;

import io.weft.protocol.AsyncAwaitContract;
import io.weft.protocol.BadInputContract;
import io.weft.protocol.CancellationContract;
import io.weft.protocol.ContextContract;
import io.weft.protocol.IoUnderTest;
import io.weft.protocol.RaceContract;
import io.weft.protocol.RawOperationsContract;
import io.weft.protocol.ShieldContract;
import io.weft.protocol.SleepContract;
import org.junit.jupiter.api.Nested;

/** The whole conformance kit on FiberIo: 1 and 4 workers, real and virtual clock. */
class FiberIoConformanceTest {
    static final IoUnderTest ONE_WORKER = IoUnderTest.scheduling(
                    () -> FiberIo.builder().workers(1).build())
            .withUncaughtExceptionHandler(h ->
                    FiberIo.builder().workers(1).uncaughtExceptionHandler(h).build());
    static final IoUnderTest FOUR_WORKERS = IoUnderTest.scheduling(
                    () -> FiberIo.builder().workers(4).build())
            .withUncaughtExceptionHandler(h ->
                    FiberIo.builder().workers(4).uncaughtExceptionHandler(h).build());
    static final IoUnderTest ONE_WORKER_VIRTUAL = IoUnderTest.scheduling(
                    () -> FiberIo.builder().workers(1).virtualClock().build())
            .withVirtualClock()
            .withUncaughtExceptionHandler(h -> FiberIo.builder()
                    .workers(1)
                    .virtualClock()
                    .uncaughtExceptionHandler(h)
                    .build());
    static final IoUnderTest FOUR_WORKERS_VIRTUAL = IoUnderTest.scheduling(
                    () -> FiberIo.builder().workers(4).virtualClock().build())
            .withVirtualClock()
            .withUncaughtExceptionHandler(h -> FiberIo.builder()
                    .workers(4)
                    .virtualClock()
                    .uncaughtExceptionHandler(h)
                    .build());

    /** The kit on 1 worker, real clock. */
    @Nested
    class OneWorker {
        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER;
            }
        }
    }

    /** The kit on 4 workers, real clock. */
    @Nested
    class FourWorkers {
        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS;
            }
        }
    }

    /** The kit on 1 worker, virtual clock. */
    @Nested
    class OneWorkerVirtualClock {
        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected IoUnderTest subject() {
                return ONE_WORKER_VIRTUAL;
            }
        }
    }

    /** The kit on 4 workers, virtual clock. */
    @Nested
    class FourWorkersVirtualClock {
        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected IoUnderTest subject() {
                return FOUR_WORKERS_VIRTUAL;
            }
        }
    }
}
