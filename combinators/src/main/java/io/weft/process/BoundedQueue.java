package io.weft.process;

import io.weft.channel.Channel;
import io.weft.channel.ChannelClosed;
import java.util.ArrayList;
import java.util.List;

/** A bounded mailbox: a {@link Channel}, whose send suspends while it is full; tryReceive is settled. */
final class BoundedQueue<M> implements MessageQueue<M> {
    private final Channel<M> channel;

    BoundedQueue(int capacity) {
        this.channel = Channel.bounded(capacity);
    }

    @Override
    public boolean put(M message) {
        try {
            channel.send(message);
            return true;
        } catch (ChannelClosed closed) {
            return false;
        }
    }

    @Override
    public int tryPut(M message) {
        try {
            return channel.trySend(message) ? 1 : 0;
        } catch (ChannelClosed closed) {
            return -1;
        }
    }

    @Override
    public M poll() {
        return channel.tryReceive();
    }

    @Override
    public void close() {
        channel.close();
    }

    @Override
    public List<M> drain() {
        List<M> left = new ArrayList<>();
        for (M message = channel.tryReceive(); message != null; message = channel.tryReceive()) {
            left.add(message);
        }
        return left;
    }
}
