package io.weft.internal;

import io.weft.Io;
import java.util.ServiceLoader;

/**
 * The Io used where none is installed: the first {@code io.weft.Io} service on the path, which
 * {@code weft-blocking-io} provides as {@code BlockingIo}. Looked up once, lazily.
 */
public final class DefaultIo {
    private DefaultIo() {}

    private static final class Holder {
        static final Io DEFAULT = ServiceLoader.load(Io.class, Io.class.getClassLoader())
                .findFirst()
                .orElse(null);
    }

    /** Returns the default Io. */
    public static Io get() {
        Io io = Holder.DEFAULT;
        if (io == null) {
            throw new IllegalStateException("No Io is installed and no default Io is on the path: add"
                    + " io.weft:weft-blocking-io (the default BlockingIo) or install one with Io.with(io)");
        }
        return io;
    }
}
