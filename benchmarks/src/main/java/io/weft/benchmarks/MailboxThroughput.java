package io.weft.benchmarks;

import io.weft.Future;
import io.weft.Io;
import io.weft.process.Handler;
import io.weft.process.Pid;
import io.weft.process.ProcessContext;
import io.weft.process.Processes;
import io.weft.process.Reply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Mailbox throughput: {@value #SENDERS} senders each send {@value #PER_SENDER} numbers to one
 * process, which sums them; the trial ends when the sum is read back. {@code fiber}: a Weft
 * process (unbounded mailbox) in a {@link Processes} registry on FiberIo, senders are tasks, the
 * sum comes back by {@code ask}. {@code vthread}: a consumer virtual thread taking from a
 * {@link LinkedBlockingQueue}, sender virtual threads, a poison pill at the end. {@code kotlin}: a
 * Channel-based actor: a coroutine iterating a {@code Channel(UNLIMITED)}, sender coroutines on
 * {@code Dispatchers.Default}, closed at the end.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MailboxThroughput extends PeerBenchmark {
    static final int SENDERS = 2;
    static final int PER_SENDER = 5_000;
    private static final long EXPECTED = (long) SENDERS * PER_SENDER * (PER_SENDER - 1) / 2;
    private static final Long POISON = -1L;

    @Param({"fiber", "vthread", "kotlin"})
    public String peer;

    private Peers peers;

    @Setup
    public void setUp() {
        peers = Peers.start(peer);
    }

    @TearDown
    public void tearDown() {
        peers.close();
    }

    @Benchmark
    public long mailbox() throws InterruptedException {
        long sum = switch (peer) {
            case "fiber" -> weft();
            case "kotlin" -> peers.kotlin.mailbox(SENDERS, PER_SENDER);
            default -> blockingQueue();
        };
        if (sum != EXPECTED) {
            throw new IllegalStateException("lost or duplicated messages: sum " + sum + " != " + EXPECTED);
        }
        return sum;
    }

    /** The summing process's messages: a number, or a request for the sum so far. */
    private sealed interface Msg permits Add, Sum {}

    private record Add(long value) implements Msg {}

    private record Sum(Reply<Long> reply) implements Msg {}

    /** Sums what it is sent. */
    private static final class Summer implements Handler<Msg> {
        private long sum;

        @Override
        public void handle(ProcessContext<Msg> self, Msg message) {
            switch (message) {
                case Add add -> sum += add.value();
                case Sum ask -> ask.reply().complete(sum);
            }
        }
    }

    private long weft() {
        return peers.weftCall(() -> {
            try (Processes processes = Processes.create()) {
                Pid<Msg> summer = processes.spawn("summer", Summer::new);
                List<Future<Void>> sending = new ArrayList<>();
                for (int s = 0; s < SENDERS; s++) {
                    sending.add(Io.async(() -> {
                        for (int i = 0; i < PER_SENDER; i++) {
                            processes.send(summer, new Add(i));
                        }
                        return null;
                    }));
                }
                for (Future<Void> f : sending) {
                    f.await();
                }
                return processes
                        .<Msg, Long>ask(summer, Sum::new, Duration.ofMinutes(1))
                        .await();
            }
        });
    }

    private static long blockingQueue() throws InterruptedException {
        LinkedBlockingQueue<Long> mailbox = new LinkedBlockingQueue<>();
        AtomicLong total = new AtomicLong();
        Thread consumer = Thread.ofVirtual().start(() -> {
            long sum = 0;
            try {
                for (Long m = mailbox.take(); !m.equals(POISON); m = mailbox.take()) {
                    sum += m;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            total.set(sum);
        });
        List<Thread> sending = new ArrayList<>();
        for (int s = 0; s < SENDERS; s++) {
            sending.add(Thread.ofVirtual().start(() -> {
                for (long i = 0; i < PER_SENDER; i++) {
                    mailbox.add(i);
                }
            }));
        }
        for (Thread t : sending) {
            t.join();
        }
        mailbox.add(POISON);
        consumer.join();
        return total.get();
    }
}
