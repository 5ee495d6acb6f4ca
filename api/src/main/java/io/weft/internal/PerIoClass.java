package io.weft.internal;

import io.weft.Io;
import java.util.Arrays;
import java.util.Objects;

/**
 * A value registered per Io implementation class (exactly that class; subclasses are not
 * included), for the internal opt-ins of Io modules ({@link HelpsAwaiters}, {@link RootTasks}).
 * Thread-safe: registering is rare and copies; looking up is a volatile read and a short scan.
 *
 * @param <V> the registered value's type
 */
final class PerIoClass<V> {
    /** Copy-on-write pairs of (class, value); one or two entries in practice. */
    private volatile Object[] entries = new Object[0];

    /** Registers {@code value} for {@code ioClass}; the first registration of a class wins. */
    synchronized void register(Class<? extends Io> ioClass, V value) {
        Objects.requireNonNull(ioClass, "ioClass");
        Objects.requireNonNull(value, "value");
        if (find(ioClass) != null) {
            return;
        }
        Object[] grown = Arrays.copyOf(entries, entries.length + 2);
        grown[grown.length - 2] = ioClass;
        grown[grown.length - 1] = value;
        entries = grown;
    }

    /** Returns the value registered for {@code ioClass}, or null. */
    V find(Class<?> ioClass) {
        Object[] e = entries;
        for (int i = 0; i < e.length; i += 2) {
            if (e[i] == ioClass) {
                @SuppressWarnings("unchecked")
                V value = (V) e[i + 1];
                return value;
            }
        }
        return null;
    }
}
