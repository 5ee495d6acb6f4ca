/**
 * Weft's combinators and channels, written once against the {@link io.weft.Io} API and never
 * naming an implementation: {@link io.weft.combinators} (structured scopes, operators over
 * futures, a semaphore), {@link io.weft.channel} (a bounded MPMC channel and select), {@link io.weft.process}
 * (processes with mailboxes, addressed by id) and
 * {@link io.weft.reactive} (Reactive Streams and {@link java.util.concurrent.Flow} adapters, both
 * directions).
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"
}) // org.reactivestreams 1.0.4 names itself in its manifest
module io.weft.combinators {
    requires transitive io.weft;
    requires transitive org.reactivestreams;

    exports io.weft.combinators;
    exports io.weft.channel;
    exports io.weft.reactive;
    exports io.weft.process;
}
