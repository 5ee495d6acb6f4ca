package io.weft.blocking;

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

/** The whole conformance kit on a real-clock BlockingIo. */
class BlockingIoConformanceTest {

    static Io newBlockingIo() {
        return BlockingIo.create();
    }

    @Nested
    class RawOperations extends RawOperationsContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }

    @Nested
    class AsyncAwait extends AsyncAwaitContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }

    @Nested
    class Cancellation extends CancellationContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }

    @Nested
    class Shield extends ShieldContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }

    @Nested
    class Race extends RaceContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }

    @Nested
    class Sleep extends SleepContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }

    @Nested
    class Context extends ContextContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }

    @Nested
    class BadInput extends BadInputContract {
        @Override
        protected Io newIo() {
            return newBlockingIo();
        }

        @Override
        protected boolean runsTasksInline() {
            return true;
        }
    }
}
