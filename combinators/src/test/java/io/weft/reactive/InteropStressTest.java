package io.weft.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.weft.Io;
import io.weft.channel.Channel;
import io.weft.testing.Ios;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.reactivestreams.FlowAdapters;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.adapter.JdkFlowAdapter;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Issue 14, part 3: Weft's publishers under randomized operator chains of the libraries users
 * combine them with, and JDK publishers consumed by a Weft Inbox. Each round draws a seed; a
 * checker sits on Weft's side of the boundary and asserts the rules there:
 * <ul>
 *   <li>demand is never exceeded (§1.1), items arrive in order with no gap and no duplicate;
 *   <li>at most one terminal signal, and nothing after it (§1.7); exactly one if nobody cancelled;
 *   <li>after a cancel made inside a signal, nothing more; after a cancel from another thread has
 *       returned, at most one signal that was already under way (WeftPublisher's guarantee);
 * </ul>
 * and the downstream gets exactly the prefix it asked for: nothing lost, nothing duplicated.
 * Between a JDK publisher and Weft's Inbox, also that the Inbox calls nothing on the
 * subscription after a terminal signal (§2.4). Every boundary is checked again once its Io has
 * closed, so a signal that came late is not missed. A failure names the Io and the seed that reproduces the round's choices. Short in the default
 * command; 10^4 rounds per Io under the stress tag.
 */
class InteropStressTest {
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final int SHORT_ROUNDS = 500;
    private static final int LONG_ROUNDS = 10_000;

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void reactorChainsOverWeftPublishersShort(Ios.Kind kind) {
        reactorChains(kind, SHORT_ROUNDS, 0x5eed);
    }

    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void submissionPublishersIntoAnInboxShort(Ios.Kind kind) {
        submissionPublishers(kind, SHORT_ROUNDS, 0x5eed);
    }

    @Tag("stress")
    @Timeout(1_200)
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void reactorChainsOverWeftPublishersLong(Ios.Kind kind) {
        reactorChains(kind, LONG_ROUNDS, System.nanoTime());
    }

    @Tag("stress")
    @Timeout(1_200)
    @ParameterizedTest
    @MethodSource("io.weft.testing.Ios#all")
    void submissionPublishersIntoAnInboxLong(Ios.Kind kind) {
        submissionPublishers(kind, LONG_ROUNDS, System.nanoTime());
    }

    // ------------------------------------------------------------ Weft -> Reactor

    private static void reactorChains(Ios.Kind kind, int rounds, long firstSeed) {
        Scheduler elsewhere = Schedulers.newParallel("interop", 2);
        List<Boundary<Integer>> boundaries = new ArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            for (int round = 0; round < rounds; round++) {
                long seed = firstSeed + round;
                try {
                    boundaries.add(reactorRound(opened.io(), new Random(seed), elsewhere));
                } catch (AssertionError | RuntimeException e) {
                    throw new AssertionError(kind + ", round " + round + ", seed " + seed + ": " + e.getMessage(), e);
                }
            }
        } finally {
            elsewhere.dispose();
        }
        assertNothingLate(kind, firstSeed, boundaries);
    }

    /**
     * Once the Io is closed (its tasks ended) every boundary is looked at again: a signal that
     * came after a round's own check (a second signal after a cancel, a second terminal signal)
     * is caught here, with the seed of its round.
     */
    private static void assertNothingLate(Ios.Kind kind, long firstSeed, List<Boundary<Integer>> boundaries) {
        for (int round = 0; round < boundaries.size(); round++) {
            Boundary<Integer> b = boundaries.get(round);
            assertEquals(
                    List.of(),
                    b.violations,
                    kind + ", round " + round + ", seed " + (firstSeed + round) + ", after the Io closed: " + b.what);
        }
    }

    private static Boundary<Integer> reactorRound(Io io, Random random, Scheduler elsewhere) {
        int n = random.nextInt(120);
        boolean fromChannel = random.nextBoolean();
        WeftPublisher<Integer> source = Io.with(io)
                .call(() -> fromChannel
                        ? Reactive.fromChannel(filled(n))
                        : Reactive.produce(emitter -> {
                            for (int i = 0; i < n; i++) {
                                emitter.emit(i);
                            }
                        }));
        Boundary<Integer> boundary = new Boundary<>(true);
        Flux<Integer> flux = random.nextBoolean()
                ? Flux.from(boundary.wrap(source))
                : JdkFlowAdapter.flowPublisherToFlux(boundary.wrapFlow(source.asFlow()));
        int expected = n;
        List<String> chain = new ArrayList<>();
        boolean takes = false;
        for (int ops = random.nextInt(4); ops > 0; ops--) {
            switch (random.nextInt(5)) {
                case 0 -> {
                    int k = 1 + random.nextInt(n + 5); // take(0) never subscribes upstream at all
                    flux = flux.take(k, true);
                    expected = Math.min(expected, k);
                    takes = true; // take cancels upstream once it has its k, even if k == n
                    chain.add("take(" + k + ")");
                }
                case 1 -> {
                    int r = 1 + random.nextInt(20);
                    flux = flux.limitRate(r);
                    chain.add("limitRate(" + r + ")");
                }
                case 2 -> {
                    int prefetch = 1 + random.nextInt(32);
                    flux = flux.publishOn(elsewhere, prefetch);
                    chain.add("publishOn(" + prefetch + ")");
                }
                case 3 -> {
                    flux = flux.concatMap(Mono::just, 1 + random.nextInt(8));
                    chain.add("concatMap");
                }
                default -> {
                    flux = flux.hide();
                    chain.add("hide");
                }
            }
        }
        int cancelAfter = random.nextInt(4) == 0 ? random.nextInt(n + 1) : -1; // a random cancel point, or none
        Downstream downstream =
                new Downstream(random.nextInt(3) == 0 ? Long.MAX_VALUE : 1 + random.nextInt(16), cancelAfter);
        flux.subscribe(downstream);
        String what =
                (fromChannel ? "fromChannel" : "produce") + "(" + n + ") " + chain + " cancelAfter=" + cancelAfter;
        downstream.awaitEnd(what);
        int wanted = cancelAfter >= 0 ? Math.min(cancelAfter, expected) : expected;
        assertEquals(prefix(wanted), downstream.items, what + ": the downstream's items");
        boundary.what = what;
        boundary.awaitSettled(what, downstream.cancelled || takes);
        assertEquals(List.of(), boundary.violations, what + ": at Weft's boundary");
        return boundary;
    }

    private static Channel<Integer> filled(int n) {
        Channel<Integer> channel = Channel.bounded(Math.max(1, n));
        for (int i = 0; i < n; i++) {
            channel.trySend(i);
        }
        channel.close();
        return channel;
    }

    private static List<Integer> prefix(int n) {
        List<Integer> items = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            items.add(i);
        }
        return items;
    }

    /** Requests in batches; cancels itself after {@code cancelAfter} items (if not negative). */
    private static final class Downstream extends BaseSubscriber<Integer> {
        final List<Integer> items = new CopyOnWriteArrayList<>();
        final CountDownLatch ended = new CountDownLatch(1);
        final long batch;
        final int cancelAfter;
        volatile boolean cancelled;
        volatile Throwable failure;
        private long outstanding;

        Downstream(long batch, int cancelAfter) {
            this.batch = batch;
            this.cancelAfter = cancelAfter;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            if (cancelAfter == 0) {
                cancelNow();
                return;
            }
            outstanding = batch;
            request(batch);
        }

        @Override
        protected void hookOnNext(Integer item) {
            if (cancelled) {
                return; // in flight when this subscriber cancelled: not part of what it asked for
            }
            items.add(item);
            if (items.size() == cancelAfter) {
                cancelNow();
                return;
            }
            if (batch != Long.MAX_VALUE && --outstanding == 0) {
                outstanding = batch;
                request(batch);
            }
        }

        private void cancelNow() {
            cancelled = true;
            cancel();
            ended.countDown();
        }

        @Override
        protected void hookOnError(Throwable throwable) {
            failure = throwable;
        }

        @Override
        protected void hookFinally(reactor.core.publisher.SignalType type) {
            ended.countDown();
        }

        void awaitEnd(String what) {
            try {
                if (!ended.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)) {
                    fail(what + ": the downstream got neither its items nor an end; it has " + items);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
            if (failure != null) {
                throw new AssertionError(what + ": the downstream failed", failure);
            }
        }
    }

    // ------------------------------------------------------------ JDK Flow -> Weft

    private static void submissionPublishers(Ios.Kind kind, int rounds, long firstSeed) {
        List<Boundary<Integer>> boundaries = new ArrayList<>();
        try (Ios.Opened opened = Ios.open(kind)) {
            for (int round = 0; round < rounds; round++) {
                long seed = firstSeed + round;
                try {
                    boundaries.add(submissionRound(opened, new Random(seed)));
                } catch (AssertionError | RuntimeException e) {
                    throw new AssertionError(kind + ", round " + round + ", seed " + seed + ": " + e.getMessage(), e);
                }
            }
        }
        assertNothingLate(kind, firstSeed, boundaries);
    }

    private static Boundary<Integer> submissionRound(Ios.Opened opened, Random random) {
        int n = random.nextInt(200);
        int prefetch = 1 + random.nextInt(32);
        int bufferSize = 1 << random.nextInt(6);
        int takeOnly = random.nextInt(3) == 0 ? random.nextInt(n + 1) : -1;
        String what = "SubmissionPublisher(" + n + ", buffer " + bufferSize + ") prefetch " + prefetch + " takeOnly "
                + takeOnly;
        Boundary<Integer> boundary = new Boundary<>(false); // the JDK's cancel is asynchronous (§3.12 allows it)
        SubmissionPublisher<Integer> jdk = new SubmissionPublisher<>(ForkJoinPool.commonPool(), bufferSize);
        try {
            List<Integer> got = opened.call(() -> {
                List<Integer> items = new ArrayList<>();
                try (Inbox<Integer> inbox = Flows.subscribe(boundary.wrapFlow(jdk), prefetch)) {
                    Thread feeder = Thread.ofVirtual().name("submitter").start(() -> {
                        try {
                            for (int i = 0; i < n; i++) {
                                jdk.submit(i); // blocks while its subscriber's buffer is full
                            }
                            jdk.close();
                        } catch (IllegalStateException closedMeanwhile) {
                            // the consumer took what it wanted and closed the publisher
                        }
                    });
                    if (takeOnly != 0) {
                        for (Integer item : inbox) {
                            items.add(item);
                            if (items.size() == takeOnly) {
                                break;
                            }
                        }
                    }
                    inbox.cancel(); // a no-op after the end of stream
                    jdk.close(); // a feeder still submitting stops
                    feeder.join(PATIENCE);
                }
                return items;
            });
            int wanted = takeOnly >= 0 ? Math.min(takeOnly, n) : n;
            assertEquals(prefix(wanted), got, what + ": the inbox's items");
        } finally {
            jdk.close();
        }
        // the JDK publisher is the one checked here: nothing beyond demand, in order, one end
        boundary.what = what;
        boundary.awaitSettled(what, true);
        assertEquals(List.of(), boundary.violations, what + ": between the JDK publisher and the Inbox");
        return boundary;
    }

    // ------------------------------------------------------------ the checker

    /**
     * Sits between a publisher and its one subscriber, forwarding every call both ways and
     * recording what breaks the rules (see the class comment). Items are expected to be
     * {@code 0, 1, 2, ...}.
     */
    static final class Boundary<T> {
        final List<String> violations = new CopyOnWriteArrayList<>();
        /** Whether the upstream is Weft's: then at most one signal may begin after cancel() returned. */
        private final boolean weftUpstream;

        private final AtomicInteger subscribed = new AtomicInteger();
        private final AtomicInteger terminals = new AtomicInteger();
        private final AtomicInteger afterCancel = new AtomicInteger();
        private final AtomicInteger callsAfterTerminal = new AtomicInteger();
        /**
         * Set once the subscriber's onComplete or onError returned: from then on it has received the
         * signal (§2.4). Calls made while the signal was on its way in are concurrent with it.
         */
        private volatile boolean terminalReceived;

        private final AtomicReference<Thread> signalling = new AtomicReference<>();
        private final CountDownLatch settled = new CountDownLatch(1);
        private volatile long requested;
        private volatile int received;
        private volatile boolean cancelReturned;
        private volatile boolean cancelledInsideASignal;
        private volatile boolean cancelled;
        /** The round's description, for a violation found after the Io closed. */
        volatile String what = "";

        Boundary(boolean weftUpstream) {
            this.weftUpstream = weftUpstream;
        }

        Publisher<T> wrap(Publisher<T> upstream) {
            return subscriber -> upstream.subscribe(new Subscriber<T>() {
                @Override
                public void onSubscribe(Subscription s) {
                    Boundary.this.onSubscribe();
                    subscriber.onSubscribe(new Subscription() {
                        @Override
                        public void request(long n) {
                            requested(n);
                            s.request(n);
                        }

                        @Override
                        public void cancel() {
                            cancelling();
                            s.cancel();
                            cancelReturned = true;
                        }
                    });
                }

                @Override
                public void onNext(T item) {
                    Thread before = enter();
                    Boundary.this.onNext(item);
                    subscriber.onNext(item);
                    leave(before);
                }

                @Override
                public void onError(Throwable t) {
                    Thread before = enter();
                    terminal("onError(" + t + ")");
                    subscriber.onError(t);
                    terminalReceived = true;
                    leave(before);
                }

                @Override
                public void onComplete() {
                    Thread before = enter();
                    terminal("onComplete");
                    subscriber.onComplete();
                    terminalReceived = true;
                    leave(before);
                }
            });
        }

        /**
         * The same checker for a Flow publisher and subscriber, through the Reactive Streams
         * adapters (thin, synchronous forwarders): the upstream is still the Flow publisher itself.
         */
        Flow.Publisher<T> wrapFlow(Flow.Publisher<T> upstream) {
            return FlowAdapters.toFlowPublisher(wrap(FlowAdapters.toPublisher(upstream)));
        }

        private void onSubscribe() {
            if (subscribed.incrementAndGet() != 1) {
                violations.add("onSubscribe #" + subscribed.get());
            }
        }

        private synchronized void requested(long n) {
            callAfterTerminal("request(" + n + ")");
            if (n <= 0) {
                return; // the publisher answers with onError (§3.9); not this checker's business
            }
            long sum = requested + n;
            requested = sum < 0 ? Long.MAX_VALUE : sum;
        }

        /**
         * §2.4, checked on Weft's Inbox (the subscriber when the upstream is not Weft's): once it
         * has received a terminal signal (its onComplete/onError returned) it calls nothing more,
         * except one call its drain loop had already decided on when the signal arrived on another
         * thread (the two are concurrent). Calls made while the signal was still on its way into
         * the Inbox are concurrent with it, however many (counting from the moment the checker saw
         * the signal flagged two such calls about once in 5,000 rounds under the stress tag).
         */
        private void callAfterTerminal(String call) {
            if (!weftUpstream && terminalReceived && callsAfterTerminal.incrementAndGet() > 1) {
                violations.add(call + ": a second call on the subscription after the terminal signal (§2.4)");
            }
        }

        private void cancelling() {
            callAfterTerminal("cancel()");
            if (signalling.get() == Thread.currentThread()) {
                cancelledInsideASignal = true;
            }
            cancelled = true;
            settled.countDown();
        }

        /** Marks a signal as begun; records one that overlaps another (§1.3) or follows a cancel. */
        private Thread enter() {
            Thread me = Thread.currentThread();
            Thread other = signalling.getAndSet(me);
            if (other != null && other != me) {
                violations.add("a signal on " + me + " overlaps one on " + other + " (§1.3)");
            }
            if (terminals.get() > 0) {
                violations.add("a signal after the terminal one (§1.7)");
            }
            if (!weftUpstream) {
                return other; // other publishers may keep signalling a while after cancel (§3.12)
            }
            if (cancelledInsideASignal) {
                violations.add("a signal after a cancel made inside a signal");
            } else if (cancelReturned && afterCancel.incrementAndGet() > 1) {
                violations.add("more than one signal after cancel() returned");
            }
            return other;
        }

        private void leave(Thread before) {
            signalling.set(before);
        }

        private void onNext(T item) {
            if (!weftUpstream && cancelled) {
                return; // after a cancel, other publishers may drop or deliver what they had buffered
            }
            int index = received;
            received = index + 1;
            if (index + 1 > requested) {
                violations.add("onNext #" + (index + 1) + " with " + requested + " requested (§1.1)");
            }
            if (!Integer.valueOf(index).equals(item)) {
                violations.add("item " + item + " where " + index + " was due (lost, duplicated or reordered)");
            }
        }

        private void terminal(String which) {
            if (terminals.incrementAndGet() > 1) {
                violations.add("a second terminal signal: " + which);
            }
            settled.countDown();
        }

        /**
         * Waits until the stream ended at the boundary (a terminal signal, or a cancel if one is
         * possible), then records a missing terminal signal when nobody cancelled.
         */
        void awaitSettled(String what, boolean cancelPossible) {
            try {
                if (!settled.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)) {
                    fail(what + ": no terminal signal and no cancel at the boundary");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
            if (!cancelled && terminals.get() != 1) {
                violations.add(terminals.get() + " terminal signals without a cancel");
            }
            if (cancelled && !cancelPossible) {
                violations.add("cancelled although nothing downstream had reason to");
            }
        }
    }
}
