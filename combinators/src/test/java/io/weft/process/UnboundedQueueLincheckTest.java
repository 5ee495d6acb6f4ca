package io.weft.process;

import io.weft.modelcheck.ModelThreads;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck for the unbounded mailbox: puts from any thread, close, and polls by one consumer
 * (Lincheck's non-parallel group) are linearizable against a closable FIFO. A put that fails is
 * one that came after the close; every message put before it is still polled, in order.
 */
@Param(name = "message", gen = IntGen.class, conf = "1:9")
public class UnboundedQueueLincheckTest {
    private final UnboundedQueue<Integer> queue = new UnboundedQueue<>();

    /** Public for Lincheck, which creates one instance per scenario. */
    public UnboundedQueueLincheckTest() {}

    /** {@link UnboundedQueue#put}: false once closed. */
    @Operation
    public boolean put(@Param(name = "message") int message) {
        return queue.put(message);
    }

    /** {@link UnboundedQueue#close}. */
    @Operation
    public void close() {
        queue.close();
    }

    /** {@link UnboundedQueue#poll}, by the one consumer: the message, or null. */
    @Operation(nonParallelGroup = "consumer")
    public Integer poll() {
        return queue.poll();
    }

    /** The sequential specification: a FIFO that refuses puts once closed. */
    public static final class Spec {
        private final ArrayDeque<Integer> messages = new ArrayDeque<>();
        private boolean closed;

        /** Public for Lincheck. */
        public Spec() {}

        public boolean put(int message) {
            if (closed) {
                return false;
            }
            messages.addLast(message);
            return true;
        }

        public void close() {
            closed = true;
        }

        public Integer poll() {
            return messages.pollFirst();
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void isLinearizableUnderModelChecking() {
        ModelThreads.linearizableUnderModelChecking(UnboundedQueueLincheckTest.class, Spec.class, 30);
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES) // Lincheck spins its threads: slow on a loaded machine
    void isLinearizableUnderStress() {
        ModelThreads.linearizableUnderStress(UnboundedQueueLincheckTest.class, Spec.class, 30);
    }
}
