package io.weft.blocking;

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

/** The whole conformance kit on BlockingIo, on its real clock and on its virtual clock. */
class BlockingIoConformanceTest {
    static final IoUnderTest REAL_CLOCK = IoUnderTest.inline(BlockingIo::create)
            .withUncaughtExceptionHandler(
                    h -> BlockingIo.builder().uncaughtExceptionHandler(h).build());
    static final IoUnderTest VIRTUAL_CLOCK = IoUnderTest.inline(
                    () -> BlockingIo.builder().virtualClock().build())
            .withVirtualClock()
            .withUncaughtExceptionHandler(h -> BlockingIo.builder()
                    .virtualClock()
                    .uncaughtExceptionHandler(h)
                    .build());

    /** The kit on the real clock. */
    @Nested
    class RealClock {
        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected IoUnderTest subject() {
                return REAL_CLOCK;
            }
        }
    }

    /** The kit on the virtual clock. */
    @Nested
    class VirtualClock {
        @Nested
        class RawOperations extends RawOperationsContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }

        @Nested
        class AsyncAwait extends AsyncAwaitContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }

        @Nested
        class Cancellation extends CancellationContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }

        @Nested
        class Shield extends ShieldContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }

        @Nested
        class Race extends RaceContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }

        @Nested
        class Sleep extends SleepContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }

        @Nested
        class Context extends ContextContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }

        @Nested
        class BadInput extends BadInputContract {
            @Override
            protected IoUnderTest subject() {
                return VIRTUAL_CLOCK;
            }
        }
    }
}
