package io.weft.channel;

/**
 * Thrown by {@link Channel#send} and {@link Channel#trySend} once the channel is closed, and by
 * {@link Channel#receive} once it is closed <em>and</em> every buffered item has been received.
 * Not a failure of the channel: the normal end-of-stream signal. Immutable and thread-safe.
 */
public class ChannelClosed extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the signal with a message saying which operation met the closed channel.
     *
     * @param message what was refused and why
     */
    public ChannelClosed(String message) {
        super(message);
    }
}
