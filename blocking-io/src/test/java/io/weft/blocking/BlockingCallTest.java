package io.weft.blocking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.weft.Io;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** {@link Io#blocking} on an inline Io: the body runs right there, on the calling thread. */
class BlockingCallTest {

    @Test
    void theBodyRunsOnTheCallingThreadInsideItsTask() {
        BlockingIo io = BlockingIo.create();
        String caller = Thread.currentThread().getName();
        String ran = Io.with(io)
                .call(() -> Io.async(
                                () -> Io.blocking(() -> Thread.currentThread().getName()))
                        .await());
        assertEquals(caller, ran);
    }

    @Test
    void aCheckedFailureIsWrappedAsAnAwaitWrapsIt() {
        BlockingIo io = BlockingIo.create();
        CompletionException e = assertThrows(
                CompletionException.class,
                () -> Io.with(io)
                        .call(() -> Io.blocking(() -> {
                            throw new IOException("disk");
                        })));
        assertInstanceOf(IOException.class, e.getCause());
    }
}
