package io.weft.blocking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.weft.Io;
import java.lang.reflect.Method;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Weft's own lookups of the installed Io and the current task, under BlockingIo (tasks inline on
 * the caller's thread), leave no JDK scoped-value cache on that thread, and still find the Io under
 * a task's own ScopedValue binding; FiberIo's side is TasksBeforeThreadsTest's.
 */
class ContextLookupTest {

    @Test
    void weftsOwnLookupsLeaveNoScopedValueCacheOnTheCallingThread() throws Exception {
        Method cacheOfThisThread = Thread.class.getDeclaredMethod("scopedValueCache"); // the JDK's lookup cache
        cacheOfThisThread.setAccessible(true);
        ScopedValue<String> users = ScopedValue.newInstance();
        BlockingIo io = BlockingIo.create();
        AtomicReference<Object[]> seen = new AtomicReference<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread fresh = Thread.ofPlatform()
                .start(
                        () -> { // a thread whose cache nothing else filled
                            try {
                                seen.set(Io.with(io)
                                        .call(() -> Io.async(() -> {
                                                    Io.async(() -> 1)
                                                            .await(); // a spawn and an await: both look the context up
                                                    Object cache = cacheOfThisThread.invoke(null);
                                                    Io inUsersBinding = ScopedValue.where(users, "x")
                                                            .call(Io::current);
                                                    return new Object[] {cache, inUsersBinding, Io.current()};
                                                })
                                                .await()));
                            } catch (Throwable t) {
                                failed.set(t);
                            }
                        });
        fresh.join();
        assertNull(failed.get());
        assertEquals(3, seen.get().length);
        assertNull(seen.get()[0], "the calling thread made a scoped-value cache for Weft's lookups");
        assertSame(io, seen.get()[1], "the installed Io, found under a task's own binding");
        assertSame(io, seen.get()[2]);
    }
}
