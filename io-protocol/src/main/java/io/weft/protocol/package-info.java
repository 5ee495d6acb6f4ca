/**
 * The conformance kit for {@link io.weft.Io} implementations. Extend each contract class with a
 * nested test class that creates your Io, and every rule of the protocol runs against it:
 *
 * <ul>
 *   <li>{@link io.weft.protocol.RawOperationsContract}: the six raw operations;
 *   <li>{@link io.weft.protocol.AsyncAwaitContract}, {@link io.weft.protocol.CancellationContract},
 *       {@link io.weft.protocol.ShieldContract}, {@link io.weft.protocol.RaceContract},
 *       {@link io.weft.protocol.SleepContract}, {@link io.weft.protocol.ContextContract},
 *       {@link io.weft.protocol.BadInputContract}: the user-level semantics every Io shares.
 * </ul>
 *
 * {@snippet :
 * class MyIoConformanceTest {
 *     static final IoUnderTest MY_IO = IoUnderTest.scheduling(MyIo::new);
 *
 *     @Nested class Raw extends RawOperationsContract {
 *         @Override protected IoUnderTest subject() { return MY_IO; }
 *     }
 *     // ... one nested class per contract
 * }
 * }
 */
package io.weft.protocol;
