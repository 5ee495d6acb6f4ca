/**
 * {@link io.weft.blocking.BlockingIo}: the inline Io, and the default one where no other is
 * installed (provided to {@code io.weft} as an {@code io.weft.Io} service).
 */
module io.weft.blocking {
    requires transitive io.weft;

    exports io.weft.blocking;

    provides io.weft.Io with
            io.weft.blocking.BlockingIo;
}
