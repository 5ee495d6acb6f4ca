package io.weft.channel;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.combinators.Semaphore;
import io.weft.fiber.FiberDump;
import io.weft.fiber.FiberIo;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A FiberIo's dump says which channel or semaphore a task waits for, and sees tasks stuck on each other. */
class WaitsInADumpTest {

    @Test
    void twoTasksEachReceivingWhatOnlyTheOtherWouldSendAreADeadlock() {
        try (FiberIo io = FiberIo.builder().workers(2).name("pair").build()) {
            Channel<String> toA = Channel.bounded(1);
            Channel<String> toB = Channel.bounded(1);
            io.spawn(() -> {
                String got = toA.receive(); // b sends only after it received
                toB.send("a got " + got);
                return got;
            });
            io.spawn(() -> {
                String got = toB.receive();
                toA.send("b got " + got);
                return got;
            });
            await().until(() -> parked(io.dump()) == 2);
            FiberDump dump = io.dump();
            for (FiberDump.TaskEntry task : dump.tasks()) {
                assertTrue(task.waitingFor().startsWith("Channel[capacity=1"), task::toString);
            }
            assertEquals(1, dump.deadlocks().size(), dump::toString);
            assertTrue(dump.toString().contains("DEADLOCK"), dump::toString);

            toA.send("outside"); // a thread outside readies one: the pair finishes
            await().until(() -> io.liveTasks() == 0);
        }
    }

    @Test
    void aTaskWaitingForAPermitShowsTheSemaphore() {
        try (FiberIo io = FiberIo.builder().workers(1).name("permits").build()) {
            Semaphore permits = new Semaphore(0);
            io.spawn(() -> {
                permits.acquire();
                permits.release();
                return null;
            });
            await().until(() -> parked(io.dump()) == 1);
            FiberDump dump = io.dump();
            assertTrue(dump.tasks().get(0).waitingFor().startsWith("Semaphore[permits=0, waiters=1]"), dump::toString);
            assertEquals(1, dump.deadlocks().size(), dump::toString);
            permits.release();
            await().until(() -> io.liveTasks() == 0);
            assertEquals(List.of(), io.dump().tasks());
        }
    }

    private static long parked(FiberDump dump) {
        return dump.tasks().stream().filter(t -> t.state().equals("PARKED")).count();
    }
}
