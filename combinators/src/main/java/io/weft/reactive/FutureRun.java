package io.weft.reactive;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.RawTask;
import io.weft.Registration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** One subscription to a {@link Reactive#fromFuture} publisher: at most one item, then the end. */
final class FutureRun<T> implements Sink.BothSubscription {
    /*
     * Implementation notes.
     *
     * No task: the future's onDone and the subscriber's request race, and whichever comes second
     * delivers. `state` holds four bits: REQUESTED (some n > 0 arrived), DONE (the future is
     * done), TERMINATED (the one delivery, a bad request or a cancel happened) and CANCELLED (set
     * by every cancel, even one that comes after the delivery began, so that a cancel made
     * inside onNext, or racing it, stops the onComplete that would follow). Every path
     * that signals first wins the CAS that sets TERMINATED, so there is exactly one signal
     * sequence (onNext then onComplete, or onComplete, or onError) and it is serial (§1.3).
     * A failure or an empty (null) value needs no demand (§1.4, §1.5), a value does.
     *
     * request() may deliver on its caller's stack (once, then TERMINATED), so recursion from
     * onNext back into request is bounded at depth one (§3.3).
     *
     * Where the signals run: on a scheduling Io, never inside the future's completion. The
     * future's onDone action only records DONE and, when a delivery is due, hands a Delivery (a
     * raw task) to the publisher's Io without waiting for it (the completing thread, maybe a
     * foreign one, is not held up by the subscriber nor by a busy Io); on an inline Io it runs at
     * once, on the completing thread, as everything does there. If the Io refuses it, or cancels
     * it before it runs (closing), the delivery happens right there instead: never lost. A subscriber that throws from a
     * signal is reported (Signals.report) and counts as cancelled (§2.13): subscribe and request
     * return normally (§1.9, §3.16), and nothing follows an onNext that threw.
     */

    private static final int REQUESTED = 1;
    private static final int DONE = 2;
    private static final int TERMINATED = 4;
    /** The subscriber cancelled: set even after TERMINATED, so a delivery under way stops early. */
    private static final int CANCELLED = 8;

    private final Io io;
    private final Future<? extends T> future;
    private final AtomicInteger state = new AtomicInteger();
    private volatile Sink<? super T> downstream;
    private volatile Registration registration;

    FutureRun(Io io, Future<? extends T> future, Sink<? super T> downstream) {
        this.io = io;
        this.future = future;
        this.downstream = downstream;
    }

    void start() {
        Sink<? super T> subscriber = downstream;
        if (!Signals.onSubscribe(io, subscriber, this)) {
            terminate(); // §2.13: a subscriber that throws from onSubscribe has cancelled
            return;
        }
        registration = future.onDone(() -> {
            set(DONE);
            if (deliveryDue()) {
                deliverElsewhere();
            }
        });
        if ((state.get() & TERMINATED) != 0) {
            registration.close(); // cancelled meanwhile: leave nothing behind on a pending future
        }
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            Sink<? super T> subscriber = terminate();
            if (subscriber != null) {
                Registration r = registration;
                if (r != null) {
                    r.close(); // nothing left to deliver: leave nothing on a pending future
                }
                try {
                    subscriber.onError(
                            new IllegalArgumentException("Reactive Streams §3.9: request(n) needs n > 0, got " + n));
                } catch (RuntimeException | Error e) {
                    Signals.report(io, e); // §3.16: request returns normally
                }
            }
            return;
        }
        set(REQUESTED);
        deliverIfReady();
    }

    @Override
    public void cancel() {
        set(CANCELLED);
        if (terminate() != null) {
            Registration r = registration;
            if (r != null) {
                r.close();
            }
        }
    }

    /** Whether deliverIfReady would deliver now (a hint: it decides again, by CAS). */
    private boolean deliveryDue() {
        int s = state.get();
        return (s & TERMINATED) == 0
                && ((s & REQUESTED) != 0 || future.state() != Future.State.SUCCESS || future.resultNow() == null);
    }

    /** Hands the delivery to the publisher's Io, not inside the future's completion; never waits for it. */
    private void deliverElsewhere() {
        try {
            io.spawnRaw(new Delivery());
        } catch (RuntimeException | Error refused) {
            deliverIfReady(); // the Io takes no task (closed): deliver here rather than never
        }
    }

    /** The delivery as a raw task: run once by the Io, or, if the Io cancels it first, run by that cancel. */
    private final class Delivery implements RawTask {
        private final AtomicBoolean claimed = new AtomicBoolean();

        @Override
        public void run() {
            if (claimed.compareAndSet(false, true)) {
                deliverIfReady();
            }
        }

        @Override
        public boolean cancel() {
            if (!claimed.compareAndSet(false, true)) {
                return false;
            }
            deliverIfReady(); // the Io is closing: the subscriber still gets its signal
            return true;
        }

        @Override
        public boolean isDone() {
            return claimed.get();
        }
    }

    private void deliverIfReady() {
        int s = state.get();
        if ((s & DONE) == 0 || (s & TERMINATED) != 0) {
            return;
        }
        boolean carriesItem = future.state() == Future.State.SUCCESS && future.resultNow() != null;
        if (carriesItem && (s & REQUESTED) == 0) {
            return; // a value waits for demand; request() comes back here
        }
        if (!state.compareAndSet(s, s | TERMINATED)) {
            deliverIfReady(); // a concurrent change: look again (bounded: TERMINATED ends it)
            return;
        }
        Sink<? super T> subscriber = downstream;
        downstream = null;
        try {
            switch (future.state()) {
                case SUCCESS -> {
                    T value = future.resultNow();
                    if (value != null) {
                        subscriber.onNext(value);
                        if ((state.get() & CANCELLED) != 0) {
                            return; // cancelled during (or just before) onNext: nothing more
                        }
                    }
                    subscriber.onComplete();
                }
                case FAILED -> subscriber.onError(future.exceptionNow());
                default -> subscriber.onError(new Cancelled("the future was cancelled"));
            }
        } catch (RuntimeException | Error e) {
            set(CANCELLED); // §2.13: it has cancelled; nothing more goes to it
            Signals.report(io, e); // not thrown at subscribe's or request's caller (§1.9, §3.16)
        }
    }

    /** Sets TERMINATED; returns the subscriber if this call did it, else null. */
    private Sink<? super T> terminate() {
        int s;
        do {
            s = state.get();
            if ((s & TERMINATED) != 0) {
                return null;
            }
        } while (!state.compareAndSet(s, s | TERMINATED));
        Sink<? super T> subscriber = downstream;
        downstream = null;
        return subscriber;
    }

    private void set(int bit) {
        state.getAndUpdate(s -> s | bit);
    }

    @Override
    public String toString() {
        return "FutureRun[state=" + state.get() + ", " + future + "]";
    }
}
