package io.weft.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Reads the current thread's innermost {@link ScopedValue} binding, when it binds a given key,
 * straight from the thread's bindings instead of through the JDK's per-thread lookup cache. It
 * needs {@code java.lang} open to this code: on the class path the flag FiberIo needs opens it
 * (ALL-UNNAMED); on the module path it takes {@code java.base/java.lang=io.weft} as well. Without
 * it, {@link #AVAILABLE} is false, every read answers null, and callers use {@link ScopedValue}'s
 * own lookup (correct, with the cache).
 */
final class InnermostBinding {
    /*
     * Implementation notes.
     *
     * Why: the JDK caches scoped-value lookups per thread in an Object[32] (144 bytes), made by
     * the first lookup that finds a binding and kept for the thread's whole life (a virtual
     * thread's is saved and restored at every mount). Context's lookup runs on every runner fiber,
     * so every parked task carried such a cache: 144 of the 1,433 bytes a parked task cost
     * (BENCHMARKS.md, "where a parked task's bytes go"), for a cache that only ever held one key.
     *
     * Where Context's binding is: a runner binds Context's slot once and runs every task inside
     * that binding, a plain thread binds one around its outermost task, and Io.with binds a new
     * slot innermost. So on a thread that runs Weft code the innermost binding is, nearly always,
     * Context's. This class reads it as Thread.scopedValueBindings -> Snapshot.bindings ->
     * Carrier.key / Carrier.value: four dependent loads, about what a cache hit costs, no cache.
     *
     * Same answer as ScopedValue.get: a lookup returns the newest binding of its key, searching
     * the newest snapshot first and, in it, the newest carrier first. The newest carrier of the
     * newest snapshot is what this reads, so when its key is the one asked for, its value is the
     * one get() returns. Anything else (nothing bound, a user's binding innermost, or the JDK's
     * "bindings unknown, walk the stack" state, null) answers null: the caller asks ScopedValue,
     * which may fill the cache as before.
     *
     * Threads: only the calling thread's own bindings are read. Besides the thread itself, only
     * the thread that starts it writes them (a StructuredTaskScope fork gets its parent's
     * snapshot before start(), which orders the write), and the JVM may set them to null (the
     * walk-the-stack state, answered with null here). Snapshot.bindings, Carrier.key and
     * Carrier.value are final. No ordering is needed.
     *
     * JDK coupling: private fields of Thread, ScopedValue.Snapshot and ScopedValue.Carrier (JDK
     * 25). If one is missing or closed to this code, the class turns itself off when it loads
     * (AVAILABLE false): lookups stay correct and fill the cache again. InnermostBindingTest fails
     * if that happens in the test JVM, which runs with the flag.
     */

    /** Whether the thread's bindings can be read; false without {@code java.lang} open to this code. */
    static final boolean AVAILABLE;

    /** (Thread) -> its scopedValueBindings: a Snapshot, Thread.class for a new thread, or null. */
    private static final MethodHandle THREAD_BINDINGS;
    /** (Snapshot) -> its newest Carrier, null in the empty snapshot. */
    private static final MethodHandle SNAPSHOT_BINDINGS;

    private static final MethodHandle CARRIER_KEY;
    private static final MethodHandle CARRIER_VALUE;
    private static final Class<?> SNAPSHOT;

    static {
        MethodHandle threadBindings = null;
        MethodHandle snapshotBindings = null;
        MethodHandle carrierKey = null;
        MethodHandle carrierValue = null;
        Class<?> snapshot = null;
        MethodType objectToObject = MethodType.methodType(Object.class, Object.class);
        try {
            MethodHandles.Lookup ours = MethodHandles.lookup();
            snapshot = Class.forName("java.lang.ScopedValue$Snapshot");
            Class<?> carrier = ScopedValue.Carrier.class;
            threadBindings = MethodHandles.privateLookupIn(Thread.class, ours)
                    .findGetter(Thread.class, "scopedValueBindings", Object.class)
                    .asType(MethodType.methodType(Object.class, Thread.class));
            snapshotBindings = MethodHandles.privateLookupIn(snapshot, ours)
                    .findGetter(snapshot, "bindings", carrier)
                    .asType(objectToObject);
            MethodHandles.Lookup inCarrier = MethodHandles.privateLookupIn(carrier, ours);
            carrierKey = inCarrier.findGetter(carrier, "key", ScopedValue.class).asType(objectToObject);
            carrierValue = inCarrier.findGetter(carrier, "value", Object.class).asType(objectToObject);
        } catch (ReflectiveOperationException | RuntimeException closedOrChanged) {
            threadBindings = null; // java.lang not open to this code, or a JDK without these fields
        }
        AVAILABLE = threadBindings != null;
        THREAD_BINDINGS = threadBindings;
        SNAPSHOT_BINDINGS = snapshotBindings;
        CARRIER_KEY = carrierKey;
        CARRIER_VALUE = carrierValue;
        SNAPSHOT = snapshot;
    }

    private InnermostBinding() {}

    /**
     * Returns the value {@code key} is bound to on the calling thread if that binding is the
     * thread's innermost one, else null (then ask {@code key} itself).
     */
    static Object valueOf(ScopedValue<?> key) {
        if (!AVAILABLE) {
            return null;
        }
        try {
            Object bindings = (Object) THREAD_BINDINGS.invokeExact(Thread.currentThread());
            if (bindings == null || bindings.getClass() != SNAPSHOT) {
                return null; // the walk-the-stack state, or a thread that never had a binding
            }
            Object newest = (Object) SNAPSHOT_BINDINGS.invokeExact(bindings);
            if (newest == null || (Object) CARRIER_KEY.invokeExact(newest) != key) {
                return null;
            }
            return (Object) CARRIER_VALUE.invokeExact(newest);
        } catch (RuntimeException | Error e) {
            throw e; // a StackOverflowError here stays one
        } catch (Throwable getterFailed) { // plain field reads: they throw nothing checked
            throw new IllegalStateException(getterFailed);
        }
    }
}
