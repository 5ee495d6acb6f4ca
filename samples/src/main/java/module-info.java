/**
 * Weft's runnable samples: small programs on {@code BlockingIo} and {@code FiberIo} that print what they do. Run them
 * all with {@code java -jar samples/target/weft-samples.jar} (main class
 * {@link io.weft.samples.Samples}).
 */
module io.weft.samples {
    requires io.weft;
    requires io.weft.blocking;
    requires io.weft.fiber;
    requires io.weft.combinators;
}
