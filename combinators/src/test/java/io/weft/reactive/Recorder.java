package io.weft.reactive;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A subscriber for tests that records every signal and checks the rules a publisher must keep
 * as it goes: signals are serial (§1.3), at most as many onNext as requested (§1.1), nothing after
 * a terminal signal (§1.7); it counts the signals that began after this subscriber's cancel()
 * returned (a publisher may have one under way). Requests are made by the test, from any thread.
 */
final class Recorder<T> implements Subscriber<T>, Flow.Subscriber<T> {
    static final Duration PATIENCE = Duration.ofSeconds(20);

    private final List<T> items = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final java.util.concurrent.atomic.AtomicReference<Thread> signalling =
            new java.util.concurrent.atomic.AtomicReference<>();
    private final AtomicLong requested = new AtomicLong();
    private final AtomicInteger afterCancel = new AtomicInteger();
    private final AtomicInteger maxDepth = new AtomicInteger();
    private volatile Subscription subscription;
    private volatile Flow.Subscription flowSubscription;
    private volatile Throwable error;
    private volatile boolean completed;
    private volatile boolean cancelReturned;
    private final int requestInOnNext;
    private int depth;

    private Recorder(int requestInOnNext) {
        this.requestInOnNext = requestInOnNext;
    }

    /** A recorder that requests only when the test says so. */
    static <T> Recorder<T> manual() {
        return new Recorder<>(0);
    }

    /** A recorder that requests {@code n} in onSubscribe and again in every onNext. */
    static <T> Recorder<T> requestingInOnNext(int n) {
        return new Recorder<>(n);
    }

    @Override
    public void onSubscribe(Subscription s) {
        Thread before = enter("onSubscribe");
        if (subscription != null || flowSubscription != null) {
            violation("second onSubscribe");
        }
        subscription = s;
        if (requestInOnNext > 0) {
            request(requestInOnNext);
        }
        leave(before);
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        Thread before = enter("onSubscribe");
        if (subscription != null || flowSubscription != null) {
            violation("second onSubscribe");
        }
        flowSubscription = s;
        if (requestInOnNext > 0) {
            request(requestInOnNext);
        }
        leave(before);
    }

    @Override
    public void onNext(T item) {
        Thread before = enter("onNext");
        int d = ++depth;
        maxDepth.accumulateAndGet(d, Math::max);
        if (cancelReturned) {
            afterCancel.incrementAndGet();
        }
        synchronized (items) {
            items.add(item);
            if (items.size() > requested.get()) {
                violation("onNext #" + items.size() + " with only " + requested.get() + " requested (§1.1)");
            }
        }
        if (requestInOnNext > 0) {
            request(requestInOnNext);
        }
        depth--;
        leave(before);
    }

    @Override
    public void onError(Throwable t) {
        Thread before = enter("onError");
        if (cancelReturned) {
            afterCancel.incrementAndGet();
        }
        error = t;
        leave(before);
    }

    @Override
    public void onComplete() {
        Thread before = enter("onComplete");
        if (cancelReturned) {
            afterCancel.incrementAndGet();
        }
        completed = true;
        leave(before);
    }

    void request(long n) {
        requested.accumulateAndGet(n, ProducerRun::saturatingAdd);
        if (subscription != null) {
            subscription.request(n);
        } else {
            flowSubscription.request(n);
        }
    }

    /** Calls request(n) with a non-positive n, which a publisher must answer with onError (§3.9). */
    void requestInvalid(long n) {
        if (subscription != null) {
            subscription.request(n);
        } else {
            flowSubscription.request(n);
        }
    }

    void cancel() {
        if (subscription != null) {
            subscription.cancel();
        } else {
            flowSubscription.cancel();
        }
        cancelReturned = true;
    }

    List<T> items() {
        synchronized (items) {
            return List.copyOf(items);
        }
    }

    int count() {
        synchronized (items) {
            return items.size();
        }
    }

    Throwable error() {
        return error;
    }

    boolean completed() {
        return completed;
    }

    /** The subscription the publisher gave, of either API. */
    Object subscription() {
        return subscription != null ? subscription : flowSubscription;
    }

    boolean subscribed() {
        return subscription != null || flowSubscription != null;
    }

    /** Signals (onNext, onError, onComplete) that began after cancel() returned. */
    int signalsAfterCancel() {
        return afterCancel.get();
    }

    /** The deepest nesting of onNext inside onNext (1 = never nested). */
    int maxOnNextDepth() {
        return maxDepth.get();
    }

    List<String> violations() {
        synchronized (violations) {
            return List.copyOf(violations);
        }
    }

    void awaitCount(int n) {
        awaitUntil(() -> count() >= n || error != null || completed);
    }

    void awaitTerminal() {
        awaitUntil(() -> error != null || completed);
    }

    static void awaitUntil(BooleanSupplier condition) {
        await().atMost(PATIENCE)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(condition::getAsBoolean);
    }

    /** Marks this thread as signalling; returns who was before (this thread when nested). */
    private Thread enter(String signal) {
        Thread me = Thread.currentThread();
        Thread before = signalling.getAndSet(me);
        if (before != null && before != me) {
            violation(signal + " while " + before + " was signalling (§1.3)");
        }
        if (completed || error != null) {
            violation(signal + " after a terminal signal (§1.7)");
        }
        return before;
    }

    private void leave(Thread before) {
        signalling.set(before);
    }

    private void violation(String what) {
        synchronized (violations) {
            violations.add(what + " [" + Thread.currentThread() + "]");
        }
    }
}
