package io.weft.samples;

import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.channel.Channel;
import io.weft.combinators.Futures;
import io.weft.combinators.Scope;
import io.weft.fiber.FiberIo;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Shows a three-stage pipeline connected by bounded {@link Channel}s inside one structured
 * {@link Scope}, with a {@link Futures#timeout} on the slow stage. Thread-safe: each run uses its
 * own FiberIo.
 *
 * <p>Orders flow from a producer through a pricing stage, whose look-up of each price gets 40 ms
 * before it gives up and uses the list price, to a consumer. The channels hold 2 items, so a fast
 * producer waits for the slower stages (backpressure by suspension). Closing a channel tells the
 * next stage the stream ended. The scope's children cannot outlive it. The run uses one worker
 * and a virtual clock, so the printed times are the same every run.
 */
public final class Pipeline {
    private Pipeline() {}

    /**
     * One priced order; immutable.
     *
     * @param order the order number
     * @param cents the price in cents
     * @param source where the price came from: "quoted", or "list price" after a timeout
     */
    public record Priced(int order, long cents, String source) {}

    /**
     * Runs the pipeline on six orders, printing each step to {@code out}.
     *
     * @param out where to print
     * @return the priced orders, in the order the consumer got them
     */
    public static List<Priced> run(PrintStream out) {
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            return io.call(() -> pipeline(io, out));
        }
    }

    private static List<Priced> pipeline(Io io, PrintStream out) {
        Channel<Integer> orders = Channel.bounded(2);
        Channel<Priced> priced = Channel.bounded(2);
        List<Priced> received = new ArrayList<>();
        try (Scope scope = Scope.open()) {
            scope.fork(() -> {
                for (int order = 1; order <= 6; order++) {
                    orders.send(order); // suspends while the pricing stage is 2 orders behind
                    out.println(VirtualClock.clock(io) + " producer: order " + order + " queued");
                }
                orders.close();
                return null;
            });
            scope.fork(() -> {
                for (int order : orders) {
                    int n = order;
                    Priced price;
                    try {
                        price = Futures.timeout(Duration.ofMillis(40), () -> quote(n));
                    } catch (TimedOut slow) {
                        price = new Priced(n, 1_000, "list price");
                    }
                    priced.send(price);
                }
                priced.close();
                return null;
            });
            Future<Integer> consumer = scope.fork(() -> {
                for (Priced p : priced) {
                    received.add(p);
                    out.println(VirtualClock.clock(io) + " consumer: order " + p.order() + " at " + p.cents()
                            + " cents (" + p.source() + ")");
                }
                return received.size();
            });
            scope.join();
            out.println(VirtualClock.clock(io) + " all " + consumer.resultNow() + " orders priced; the scope is done");
        }
        return received;
    }

    /** A price look-up that is slow for every third order. */
    private static Priced quote(int order) {
        Io.sleep(Duration.ofMillis(order % 3 == 0 ? 100 : 10));
        return new Priced(order, 900 + order, "quoted");
    }
}
