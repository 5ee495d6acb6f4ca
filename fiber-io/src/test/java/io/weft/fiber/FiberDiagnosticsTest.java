package io.weft.fiber;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a thread dump and {@link FiberIo#dump()} show of a running FiberIo. */
class FiberDiagnosticsTest {

    @Test
    void fibersAreNamedAfterTheFiberIoAndANamedTaskShowsItsName() {
        try (FiberIo io = FiberIo.builder().workers(1).name("shop").build()) {
            List<String> names = io.call(() -> {
                List<String> seen = new ArrayList<>();
                seen.add(Io.async("load-cart", () -> Thread.currentThread().getName())
                        .await());
                Future<String> unnamed = Io.async(() -> Thread.currentThread().getName());
                Io.sleep(Duration.ofMillis(1)); // it runs on another fiber, or on this one's after us
                seen.add(unnamed.await());
                seen.add(Thread.currentThread().getName());
                return seen;
            });
            // the first ran in place (awaited before it started), on the root task's fiber, as itself
            assertTrue(names.get(0).matches("shop-fiber-\\d+/load-cart"), names.get(0));
            assertTrue(names.get(1).matches("shop-fiber-\\d+"), names.get(1));
            assertTrue(names.get(2).matches("shop-fiber-\\d+"), names.get(2));
            assertTrue(io.dump().tasks().isEmpty());
        }
    }

    @Test
    void aNamedTasksNameDoesNotStayOnItsFiber() {
        try (FiberIo io = FiberIo.builder().workers(1).name("shop").build()) {
            String later = io.call(() -> {
                Future<String> named =
                        Io.async("named", () -> Thread.currentThread().getName());
                Future<String> next = Io.async(() -> Thread.currentThread().getName());
                Io.sleep(Duration.ofMillis(5)); // both run on one runner fiber, one after the other
                named.await();
                return next.await();
            });
            assertFalse(later.contains("named"), later);
        }
    }

    @Test
    void aJsonThreadDumpListsTheFibersInTheirOwnContainerWithWhatTheyWaitFor(@TempDir Path dir) throws Exception {
        try (FiberIo io = FiberIo.builder().workers(2).name("dumped").build()) {
            CountDownLatch parked = new CountDownLatch(2);
            CompletableFuture<Void> release = new CompletableFuture<>();
            io.spawn(() -> Io.async("sleeper", () -> {
                        parked.countDown();
                        Io.sleep(Duration.ofDays(1));
                        return null;
                    })
                    .await());
            AtomicReference<Future<Object>> slow = new AtomicReference<>();
            io.spawn(() -> {
                Future<Object> never = Io.async("never-done", () -> {
                    parked.countDown();
                    release.join(); // a JDK wait, not a Weft suspend point
                    return null;
                });
                slow.set(never);
                Io.sleep(Duration.ofMillis(1)); // let it start on its own fiber
                return never.await();
            });
            parked.await();
            await().until(() -> io.dump().tasks().size() == 4
                    && io.dump().tasks().stream().noneMatch(t -> t.state().equals("RUNNING")));

            Path file = dir.resolve("threads.json");
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                    .dumpThreads(file.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.JSON);
            @SuppressWarnings("unchecked")
            Map<String, Object> root =
                    (Map<String, Object>) ((Map<String, Object>) Json.parse(Files.readString(file))).get("threadDump");
            String container = io.dump().threadContainer();
            List<Map<String, Object>> ours = new ArrayList<>();
            for (Object c : (List<?>) root.get("threadContainers")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> map = (Map<String, Object>) c;
                for (Object t : (List<?>) map.get("threads")) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> thread = (Map<String, Object>) t;
                    boolean fiber = String.valueOf(thread.get("name")).startsWith("dumped-fiber-");
                    assertEquals(
                            fiber,
                            map.get("container").equals(container),
                            () -> thread.get("name") + " is in " + map.get("container"));
                    if (fiber) {
                        ours.add(thread);
                    }
                }
            }
            assertNotEquals("<root>", container);
            List<String> blockers = new ArrayList<>();
            for (Map<String, Object> thread : ours) {
                assertEquals(Boolean.TRUE, thread.get("virtual"));
                if (thread.get("parkBlocker") instanceof Map<?, ?> blocker) {
                    blockers.add(String.valueOf(blocker.get("object")).replaceAll("@.*", ""));
                }
            }
            assertTrue(blockers.contains("io.weft.internal.Sleep$Until"), blockers::toString);
            assertTrue(blockers.contains("io.weft.internal.Task"), blockers::toString); // an await
            release.complete(null);
        }
    }

    @Test
    void theDumpShowsTheTaskTreeWhatEachWaitsForAndTheStacks() {
        try (FiberIo io = FiberIo.builder().workers(2).name("tree").build()) {
            CountDownLatch sleeping = new CountDownLatch(1);
            Future<Object> root = io.spawn(() -> {
                Future<Object> child = Io.async(
                        "child",
                        () -> Io.async("grandchild", () -> {
                                    sleeping.countDown();
                                    Io.sleep(Duration.ofDays(1));
                                    return null;
                                })
                                .await());
                Io.sleep(Duration.ofMillis(1)); // the child starts on its own fiber
                return child.await();
            });
            await().until(() -> sleeping.getCount() == 0 && io.dump().tasks().size() == 3);
            FiberDump dump = io.dump();
            assertEquals("tree", dump.io());
            FiberDump.TaskEntry top = only(dump, null);
            FiberDump.TaskEntry child = only(dump, "child");
            FiberDump.TaskEntry grandchild = only(dump, "grandchild");
            assertEquals(0, top.spawnerId());
            assertEquals(List.of(child.id()), top.children());
            assertEquals(top.id(), child.spawnerId());
            assertEquals(child.id(), grandchild.spawnerId());
            assertEquals("PARKED", top.state());
            assertEquals(child.id(), top.awaitsTask());
            assertTrue(top.waitingFor().startsWith("await Task#" + child.id()), top.waitingFor());
            // the grandchild was awaited before it started: the child runs it in place
            assertEquals("HELPING", child.state());
            assertTrue(grandchild.waitingFor().startsWith("sleep until "), grandchild.waitingFor());
            assertEquals("PARKED", grandchild.state());
            assertTrue(
                    grandchild.stack().stream()
                            .anyMatch(f -> f.getClassName().equals(FiberDiagnosticsTest.class.getName())),
                    grandchild.stack()::toString);
            assertTrue(grandchild.thread().contains("tree-fiber-"), grandchild.thread());
            assertEquals(List.of(), dump.deadlocks(), "a sleeper wakes by itself");
            String text = dump.toString();
            assertTrue(text.contains("Task#" + child.id() + " \"child\" HELPING"), text);
            assertTrue(text.contains("    Task#" + grandchild.id() + " \"grandchild\" PARKED"), text);
            assertTrue(text.contains("at " + FiberDiagnosticsTest.class.getName()), text);
            root.cancel(); // the others are not in its scope: closing the FiberIo cancels them
        }
    }

    @Test
    void tasksThatAllWaitForEachOtherAreReportedAsADeadlock() {
        try (FiberIo io = FiberIo.builder().workers(2).name("stuck").build()) {
            Object lostSignal = new Object();
            ParkToken[] parked = new ParkToken[1];
            // a task parked on a token nobody will ready (what a lost wake-up leaves behind)
            io.spawn(() -> Io.async("a", () -> {
                        ParkToken token = ParkToken.create(lostSignal);
                        parked[0] = token;
                        Io.current().suspendRaw(token);
                        return null;
                    })
                    .await());
            await().until(() -> io.dump().tasks().size() == 2
                    && io.dump().tasks().stream().allMatch(t -> !t.state().equals("RUNNING")));
            FiberDump dump = io.dump();
            assertEquals(1, dump.deadlocks().size(), dump::toString);
            assertTrue(dump.deadlocks().get(0).contains("every live task (2) is parked"), dump::toString);
            assertTrue(dump.toString().contains("DEADLOCK"));

            // a task on a timer can make progress: no deadlock claimed
            Future<Object> sleeper = io.spawn(() -> {
                Io.sleep(Duration.ofDays(1));
                return null;
            });
            await().until(() -> io.dump().tasks().size() == 3);
            assertEquals(List.of(), io.dump().deadlocks());
            sleeper.cancel();
            io.ready(parked[0]);
            await().until(() -> io.liveTasks() == 0);
        }
    }

    @Test
    void aTaskAwaitingAFutureCompletedFromOutsideIsNoDeadlock() {
        try (FiberIo io = FiberIo.builder().workers(1).name("outside").build()) {
            CompletableFuture<String> response = new CompletableFuture<>(); // an HTTP response, a blocking call...
            Future<String> waiting = io.spawn(() -> Future.from(response).await());
            await().until(() ->
                    io.dump().tasks().stream().anyMatch(t -> t.state().equals("PARKED")));
            assertEquals(List.of(), io.dump().deadlocks(), () -> io.dump().toString());
            response.complete("late");
            assertEquals("late", waiting.await());
        }
    }

    private static FiberDump.TaskEntry only(FiberDump dump, String name) {
        List<FiberDump.TaskEntry> named = dump.tasks().stream()
                .filter(t -> java.util.Objects.equals(t.name(), name))
                .toList();
        assertEquals(1, named.size(), dump::toString);
        assertNotNull(named.get(0));
        return named.get(0);
    }
}
