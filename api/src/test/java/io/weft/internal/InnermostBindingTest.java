package io.weft.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.weft.Io;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.junit.jupiter.api.Test;

/**
 * InnermostBinding answers what {@link ScopedValue#get} answers when the asked key is bound
 * innermost, and null otherwise, and Context finds the installed Io either way.
 */
class InnermostBindingTest {
    private static final ScopedValue<String> KEY = ScopedValue.newInstance();
    private static final ScopedValue<String> OTHER = ScopedValue.newInstance();

    @Test
    void isOnInTheTestJvm() {
        // The tests run with java.lang open (the flag FiberIo needs): if this fails, the JDK's
        // fields moved and every lookup went back to the ScopedValue cache
        assertTrue(InnermostBinding.AVAILABLE);
    }

    @Test
    void readsTheInnermostBindingOfItsKey() throws Exception {
        assertNull(InnermostBinding.valueOf(KEY), "unbound");
        String seen = ScopedValue.where(KEY, "outer").call(() -> (String) InnermostBinding.valueOf(KEY));
        assertEquals("outer", seen);
        String rebound = ScopedValue.where(KEY, "outer")
                .call(() -> ScopedValue.where(KEY, "inner").call(() -> (String) InnermostBinding.valueOf(KEY)));
        assertEquals("inner", rebound, "the newest binding, as ScopedValue.get says");
        String both =
                ScopedValue.where(OTHER, "x").where(KEY, "newest").call(() -> (String) InnermostBinding.valueOf(KEY));
        assertEquals("newest", both, "the newest carrier of one where(...).where(...) chain");
        assertNull(
                ScopedValue.where(KEY, "outer")
                        .call(() -> ScopedValue.where(OTHER, "x").call(() -> InnermostBinding.valueOf(KEY))),
                "another key bound innermost: ask ScopedValue");
        assertNull(InnermostBinding.valueOf(KEY), "unbound again after the calls");
    }

    @Test
    void contextLookupsUnderIoWithMakeNoScopedValueCache() throws Throwable {
        MethodHandle cacheOfThisThread = MethodHandles.privateLookupIn(Thread.class, MethodHandles.lookup())
                .findStatic(Thread.class, "scopedValueCache", MethodType.methodType(Object[].class));
        DeferredIo io = new DeferredIo();
        Object[][] cache = {new Object[0]}; // stays non-null if the thread never got there
        Thread fresh = Thread.ofPlatform()
                .start(
                        () -> { // a thread whose cache nothing else filled
                            Io.with(io).run(() -> {
                                Context.currentIo();
                                Context.currentTask();
                                cache[0] = cacheOf(cacheOfThisThread);
                            });
                        });
        fresh.join();
        assertNull(cache[0], "Context's lookups filled the JDK's scoped-value cache");
    }

    private static Object[] cacheOf(MethodHandle cacheOfThisThread) {
        try {
            return (Object[]) cacheOfThisThread.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    @Test
    void contextFindsTheIoWhetherOrNotItsBindingIsInnermost() throws Exception {
        DeferredIo io = new DeferredIo();
        Io[] seen = Io.with(io).call(() -> new Io[] {
            Context.currentIo(), // Context's binding innermost: read directly
            ScopedValue.where(KEY, "user").call(Context::currentIo) // a user's binding above it: the fallback
        });
        assertSame(io, seen[0]);
        assertSame(io, seen[1]);
        assertNull(Context.currentIo(), "nothing installed outside");
    }
}
