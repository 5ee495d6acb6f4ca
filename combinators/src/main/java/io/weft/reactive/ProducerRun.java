package io.weft.reactive;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.internal.SideThreads;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One subscription to a {@link Reactive#produce} publisher: the producer task, its emitter and the
 * subscriber's subscription, in one object.
 */
final class ProducerRun<T> implements Sink.BothSubscription, Emitter<T> {
    /*
     * Implementation notes.
     *
     * Who signals: every onNext comes from emit() on the producer task, and the terminal signal
     * from the same task after the producer returns (finish()), so the subscriber's signals are
     * serial (§1.3) with no lock and no queue: the emitting guard refuses a second, concurrent
     * emit. request() and cancel() only write state and wake the producer; they never call the
     * subscriber, so request-inside-onNext cannot recurse (§3.3). The one exception is a run that
     * never reaches the producer (spawn refused, cancelled before start): start() or the task's
     * onDone signals instead, when the producer provably never ran.
     *
     * State:
     *   demand  - outstanding requests; added by request() (saturating at MAX_VALUE, which then
     *             stays: effectively unbounded, §3.17), taken one per emit by the producer.
     *   stop    - null while active; CANCELLED after cancel(); the IllegalArgumentException after
     *             request(n <= 0). Set once by CAS: the first reason wins. Read by emit (to
     *             refuse) and by finish (to decide the terminal signal: none after cancel, the
     *             IAE after a bad request, §3.9).
     *   waiter  - the producer parked in awaitDemand: its Io and one-shot ParkToken.
     *   task    - the producer task's future, published by the task itself when it starts.
     *   downstream - the subscriber; nulled by cancel and by the terminal signal (§3.13).
     *
     * Lost wake-up (the Dekker pair): the producer sets `waiter`, then re-reads `demand` and
     * `stop` before parking; request() adds demand, then reads `waiter`; cancel() sets `stop`, then
     * reads `waiter`. All are volatile (seq_cst), so either the producer's re-read sees the new
     * demand/stop, or the other side sees the waiter and readies its token (a token readied before
     * the park makes the park return at once). DemandWakeUpTest races request against the park.
     *
     * Stray emits (an emit from a task the producer spawned, still running when the producer
     * returned): the finisher sets `finished`, wakes a parked emit, then takes the emit guard so
     * the terminal signal cannot overlap an onNext. If an emit holds the guard, the finisher parks
     * (shielded) after publishing its token in `leaving`, then re-tries the guard; leaveEmitter
     * clears the guard, then reads `leaving` and readies it. Dekker again: one side sees the other.
     *
     * Subscriber exceptions: one thrown by onNext, onComplete or onError is reported to the Io's
     * uncaught-exception handler, else the thread's (Signals.report), never dropped; after
     * onNext throws, the subscription counts as cancelled (§2.13) and the producer's emit rethrows it.
     *
     * Cancel before start: cancel() sets `stop`, then reads `task`; the task writes `task`, then
     * reads `stop`. Either the task sees `stop` and returns before producing, or cancel() sees the
     * task and cancels it (its next suspend point throws). Same Dekker argument.
     *
     * Which thread runs the producer: the task is spawned on the Io captured when the publisher
     * was made. A scheduling Io (FiberIo) runs it as a fiber. An inline Io (BlockingIo) would run
     * it right here, inside subscribe() on the subscriber's thread, and the first emit without
     * demand would block the thread that is supposed to call request(): a deadlock for any
     * subscriber that requests later from the same thread (the TCK's, a UI loop's). So when the
     * spawned task finds itself running on the subscribing thread during the spawn, it hands the
     * producer to a thread of its own (with the same Io installed) and returns. No Io
     * implementation is named: any Io that runs tasks inline is detected the same way. The thread
     * comes from SideThreads: a JDK virtual thread, or, where the Io keeps a world of its own (a
     * virtual-clock BlockingIo), a thread that takes turns with the subscriber's, so a simulated
     * program stays deterministic.
     */

    private static final Object CANCELLED = new Object() {
        @Override
        public String toString() {
            return "cancelled";
        }
    };

    private final Io io;
    private final Producer<T> producer;
    private volatile Sink<? super T> downstream;
    private final AtomicLong demand = new AtomicLong();
    private final AtomicReference<Object> stop = new AtomicReference<>();
    private final AtomicReference<Waiter> waiter = new AtomicReference<>();
    private final AtomicBoolean terminated = new AtomicBoolean();
    private final AtomicBoolean emitting = new AtomicBoolean();
    private volatile Future<?> task;
    private volatile boolean entered;
    private volatile boolean finished;
    /** The thread inside start()'s spawn, to recognise an Io that runs the task inline. */
    private volatile Thread spawning;
    /** The producer task, once it returned, waiting for a stray emit to leave the guard. */
    private volatile Waiter leaving;
    /**
     * What a subscriber's onNext threw, already reported (the producer may rethrow it): written
     * by emit on the producer task, read by finish on the same task once the producer returned.
     */
    private volatile Throwable reportedFromOnNext;

    private record Waiter(Io io, ParkToken token) {}

    ProducerRun(Io io, Producer<T> producer, Sink<? super T> downstream) {
        this.io = io;
        this.producer = producer;
        this.downstream = downstream;
    }

    /** Signals onSubscribe, then starts the producer task (unless the subscriber already quit). */
    void start() {
        Sink<? super T> subscriber = downstream;
        if (!Signals.onSubscribe(io, subscriber, this)) {
            stopWith(CANCELLED); // §2.13: a subscriber that throws from onSubscribe has cancelled
        }
        if (stop.get() != null) {
            finish(null); // cancelled or a bad request inside onSubscribe: the producer never runs
            return;
        }
        spawning = Thread.currentThread();
        try {
            Future<Void> spawned = Io.with(io).call(() -> Io.async(this::enter));
            spawned.onDone(() -> {
                if (!entered) { // cancelled before it started (an Io shutting down): say so
                    finish(new Cancelled("the producer task was cancelled before it started"));
                }
            });
        } catch (RuntimeException | Error e) {
            finish(e); // the Io refused the task (closed, say): the producer never ran
        } finally {
            spawning = null;
        }
    }

    /** The spawned task: runs the producer, or hands it to its own thread under an inline Io. */
    private Void enter() {
        entered = true;
        if (Thread.currentThread() != spawning) {
            return produce();
        }
        try {
            SideThreads.startFor(io, "weft-producer", () -> {
                try {
                    Io.with(io).run(() -> Io.async(this::produce));
                } catch (RuntimeException | Error e) {
                    finish(e);
                }
            });
        } catch (RuntimeException | Error e) {
            finish(e);
        }
        return null;
    }

    /** The producer task proper: runs the producer once, then sends the terminal signal. */
    private Void produce() {
        task = Io.currentTask().orElseThrow();
        Throwable failure = null;
        try {
            if (stop.get() == null) {
                producer.produce(this);
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            finished = true;
        }
        releaseStrayEmits();
        finish(failure);
        if (failure instanceof Error error) {
            throw error;
        }
        return null;
    }

    /**
     * Once the producer has returned, an emit left behind (by a task the producer spawned) must
     * neither stay parked nor overlap the terminal signal: wake it (it then sees `finished` and
     * throws), and hold the emit guard from now on, waiting (parked, shielded: the terminal
     * signal must not overlap it even if this task is cancelled) for one in progress to leave.
     */
    private void releaseStrayEmits() {
        wakeProducer(); // after `finished`: a stray emit parks no more (demandOrPark re-checks it)
        if (emitting.compareAndSet(false, true)) {
            return;
        }
        Io current = Io.current();
        Io.shield(() -> {
            while (true) {
                Waiter me = new Waiter(current, ParkToken.create());
                leaving = me; // then re-try the guard; the emit clears it, then reads `leaving`
                if (emitting.compareAndSet(false, true)) {
                    leaving = null;
                    return null;
                }
                current.suspendRaw(me.token());
            }
        });
    }

    /** Leaves the emit guard, waking a finisher waiting for it (see releaseStrayEmits). */
    private void leaveEmitter() {
        emitting.set(false);
        Waiter finisher = leaving;
        if (finisher != null) {
            finisher.io().ready(finisher.token());
        }
    }

    /**
     * Sends the one terminal signal: none after cancel (even one after a bad request: the cancel
     * let go of the subscriber first), the IAE after a bad request; a failure no signal carries
     * is reported.
     */
    private void finish(Throwable failure) {
        if (!terminated.compareAndSet(false, true)) {
            return;
        }
        Sink<? super T> subscriber = downstream;
        downstream = null;
        Object why = stop.get();
        if (subscriber == null || why == CANCELLED) {
            // No signal to carry the producer's own failure (a cleanup that threw after the
            // cancel, an onUndelivered hook): report it, or it is lost (DESIGN §3.9)
            if (failure != null && !(failure instanceof Cancelled) && failure != reportedFromOnNext) {
                Signals.report(io, failure);
            }
            return;
        }
        try {
            if (why instanceof Throwable badRequest) {
                subscriber.onError(badRequest);
            } else if (failure == null) {
                subscriber.onComplete();
            } else {
                subscriber.onError(failure);
            }
        } catch (RuntimeException | Error e) {
            Signals.report(io, e); // §2.13: the subscriber broke the rules; nobody else would see it
        }
    }

    // ---------------------------------------------------------------- subscription (any thread)

    @Override
    public void request(long n) {
        if (n <= 0) {
            stopWith(new IllegalArgumentException("Reactive Streams §3.9: request(n) needs n > 0, got " + n));
            return;
        }
        if (stop.get() != null) {
            return;
        }
        demand.accumulateAndGet(n, ProducerRun::saturatingAdd);
        wakeProducer();
    }

    @Override
    public void cancel() {
        downstream = null; // no further signal, even after a bad request's stop (its onError not sent yet)
        stopWith(CANCELLED);
    }

    private void stopWith(Object why) {
        if (!stop.compareAndSet(null, why)) {
            return;
        }
        if (why == CANCELLED) {
            downstream = null; // §3.13: let go of the subscriber
        }
        Future<?> producerTask = task;
        if (producerTask != null) {
            producerTask.cancel();
        }
        wakeProducer(); // a producer parked inside a shield is not woken by the cancel
    }

    private void wakeProducer() {
        if (waiter.get() != null) {
            Waiter parked = waiter.getAndSet(null);
            if (parked != null) {
                parked.io().ready(parked.token());
            }
        }
    }

    static long saturatingAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    // ---------------------------------------------------------------- emitter (producer task)

    @Override
    public void emit(T item) {
        Objects.requireNonNull(item, "item (Reactive Streams §2.13 forbids null items)");
        enterEmitter();
        try {
            takeOneDemand();
            Sink<? super T> subscriber = downstream;
            if (subscriber == null || stop.get() != null) {
                throw cancelled();
            }
            try {
                subscriber.onNext(item);
            } catch (RuntimeException | Error e) {
                // §2.13: a subscriber that throws has cancelled; it is reported (the producer may
                // well swallow it), and the producer learns why
                stopWith(CANCELLED);
                reportedFromOnNext = e;
                Signals.report(io, e);
                throw e;
            }
        } finally {
            leaveEmitter();
        }
    }

    @Override
    public void awaitDemand() {
        enterEmitter();
        try {
            while (demandOrPark() == 0) {
                // parked and woken: look again
            }
        } finally {
            leaveEmitter();
        }
    }

    @Override
    public boolean isCancelled() {
        return stop.get() != null;
    }

    private void enterEmitter() {
        if (finished) {
            throw new IllegalStateException("emit after the producer returned: the stream has ended");
        }
        if (!emitting.compareAndSet(false, true)) {
            throw new IllegalStateException("emit called concurrently: one task emits at a time (§1.3)");
        }
    }

    private void takeOneDemand() {
        while (true) {
            long d = demandOrPark();
            if (d == Long.MAX_VALUE || (d > 0 && demand.compareAndSet(d, d - 1))) {
                return;
            }
        }
    }

    /** Returns the demand if positive, else parks until woken and returns 0; throws once stopped. */
    private long demandOrPark() {
        if (stop.get() != null) {
            throw cancelled();
        }
        if (finished) {
            throw new IllegalStateException("emit after the producer returned: the stream has ended");
        }
        long d = demand.get();
        if (d > 0) {
            return d;
        }
        Io current = Io.current();
        Waiter me = new Waiter(current, ParkToken.create());
        waiter.set(me);
        if (demand.get() > 0 || stop.get() != null || finished) {
            waiter.compareAndSet(me, null);
            return 0;
        }
        try {
            current.suspendRaw(me.token());
        } finally {
            waiter.compareAndSet(me, null);
        }
        return 0;
    }

    private static Cancelled cancelled() {
        return new Cancelled("the subscriber cancelled the subscription");
    }

    /** For tests: whether the run is over (the producer returned, or will never run). */
    boolean ended() {
        return terminated.get();
    }

    @Override
    public String toString() {
        Object why = stop.get();
        return "ProducerRun[demand=" + demand.get() + (why == null ? "" : ", " + why)
                + (terminated.get() ? ", terminated]" : "]");
    }
}
