/**
 * Weft's combinators and channels, written once against the {@link io.weft.Io} API and never
 * naming an implementation: {@link io.weft.combinators} (structured scopes, operators over
 * futures, a semaphore) and {@link io.weft.channel} (a bounded MPMC channel).
 */
module io.weft.combinators {
    requires transitive io.weft;

    exports io.weft.combinators;
    exports io.weft.channel;
}
