package io.weft.channel;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.ParkToken;
import io.weft.Registration;
import io.weft.TimerHandle;
import io.weft.combinators.internal.Deadlines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Waits for the first of several operations: receiving from a channel, sending to a channel, a
 * future completing, or a timeout. Exactly one clause <em>commits</em>, and {@link #select()}
 * returns what that clause's function makes of it; the other clauses consume nothing and deliver
 * nothing: no item is taken from a channel whose clause lost, and no item is put into one.
 *
 * {@snippet :
 * Select<String> next = Select.<String>ordered()
 *         .onReceive(orders, order -> "order " + order.id())
 *         .onReceive(cancellations, c -> "cancel " + c.orderId())
 *         .onTimeout(Duration.ofSeconds(1), () -> "idle");
 * while (running) {
 *     log(next.select());   // suspends until one clause is ready; nothing is lost in between
 * }
 * }
 *
 * <p><b>Which clause.</b> {@link #ordered()} tries the clauses in the order they were added, so
 * when several are ready at once the first one wins. {@link #fair(long)} tries them in a random
 * order drawn afresh for every {@code select()} from a seeded generator, so a busy channel cannot
 * starve the others and a run replays with the same seed (on a deterministic Io). The timeout
 * clause commits only when no other clause is ready at the deadline.
 *
 * <p><b>Closed channels.</b> A receive clause whose channel is closed and drained commits: it
 * throws {@link ChannelClosed} from {@code select()}, or returns what its {@code whenClosed}
 * supplier makes (see {@link #onReceive(Channel, Function, Supplier)}), which tells a fan-in loop
 * which channel ended. A send clause whose channel is closed commits by throwing
 * {@code ChannelClosed}; its item goes to the channel's undelivered-item hook, as a {@code send}
 * would.
 *
 * <p><b>Cancellation.</b> Like {@link Channel#receive()}, a select is a suspend point only when it
 * has to wait: if a clause is ready at the call, it commits even in a cancelled task. A wait that
 * is cancelled throws {@link Cancelled} having committed nothing: no item was taken or sent, and no
 * clause's function ran.
 *
 * <p><b>Use.</b> A Select is built by one thread; the first {@code select()} freezes it, after
 * which the clause methods throw {@link IllegalStateException}. A built Select may be run again
 * and again, by several tasks at once (each run has its own state; a fair Select's runs draw from
 * one shared sequence). The clauses' functions run in the selecting task, after the commit and
 * outside any lock; an exception one throws comes out of {@code select()}.
 *
 * @param <R> what a select returns
 */
public final class Select<R> {
    /*
     * Implementation notes.
     *
     * The commit is the operation itself. A channel clause commits by one ring operation (a poll
     * or an offer) that succeeds; each round of a select performs at most one such successful
     * operation and then stops, so two clauses can never both commit. A future clause commits by
     * seeing its future done (consuming nothing, so nothing to undo); the timeout clause commits
     * by seeing the deadline passed after every other clause failed.
     *
     * One run (select()):
     *   1. try each clause without waiting, in the run's order; the first that succeeds commits;
     *   2. if the deadline has passed, the timeout clause commits; step 1 was then settled (a
     *      slot between another thread's claim and its publish is waited for, as Channel's
     *      receive does before its TimedOut), so a finished send's item is never missed;
     *   3. register: one fresh ParkToken for the run; for each clause, in order, a node on the
     *      channel's waiter list (Waiters.linkUnless, whose re-check under the list's lock may
     *      commit the clause at once: then the clauses registered so far are taken back), an
     *      onDone registration on a future, and a timer on the Io's clock. Every registration
     *      readies the same token, so the first ready wins and the others are idempotent;
     *   4. park on the token; then take every registration back (Waiters.leave), noting which
     *      nodes a waker had already popped, and go to 1.
     * This is the channel's own wake-and-retry protocol (see Channel's notes) applied to several
     * lists at once: a wake-up is a permission to retry, never a hand-off, so a woken select has
     * nothing to return to a channel whose clause it does not commit.
     *
     * Wake-ups that must not be lost: a waker pops a node and readies its token, expecting its
     * owner to use the item or slot. A select that was popped on channel A but commits a clause
     * of another channel passes A's wake-up on (A's list wakeOne), exactly as a cancelled
     * receiver does; so does a select whose wait is cancelled or times out, for every popped
     * node. A select that commits nothing in step 1 after its wake-up re-registers without
     * passing anything on yet, like a plain receiver that finds its item taken by a fast-path
     * caller: that caller's own wake-up chain (Channel.afterTake/afterPut) covers what is left.
     * The wake-up stays noted (`popped` is kept across rounds), so a run that later commits
     * another clause or times out passes it on then: a spare wake-up at worst, never a lost one.
     * ChannelLincheckTest's select scenarios explore these interleavings (a select and a plain
     * receiver on one channel, a select committing elsewhere), where a lost wake-up is a hang.
     *
     * Shared state: none of a run's own (the token, nodes and registrations are local to the
     * run); the clause list is frozen before the first run (a volatile flag written by the
     * builder's thread, checked by every builder method), and a fair Select's sequence is one
     * AtomicLong (each run seeds its own SplittableRandom from the next value).
     *
     * Cost of a run that waits: one node per channel clause (linked under that list's lock), one
     * onDone registration per future clause, one timer, one token; every ring operation of the
     * retries is the channel's fast path.
     */

    private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;
    private static final Object NONE = new Object();

    private final List<Clause<R>> clauses = new ArrayList<>();
    /** Null for an ordered Select; else the next run's seed. */
    private final AtomicLong nextSeed;

    private Duration timeout;
    private Supplier<? extends R> onTimeout;
    private volatile boolean frozen;

    private Select(AtomicLong nextSeed) {
        this.nextSeed = nextSeed;
    }

    /**
     * A select that tries its clauses in the order they are added: when several are ready, the
     * first one added wins.
     *
     * @param <R> what the select returns
     * @return a new select with no clauses
     */
    public static <R> Select<R> ordered() {
        return new Select<>(null);
    }

    /**
     * A select that tries its clauses in a random order, drawn afresh for each run from a
     * generator seeded with {@code seed}: each ready clause is as likely to win as any other, and
     * the same seed gives the same sequence of orders.
     *
     * @param seed the seed of the sequence of orders
     * @param <R> what the select returns
     * @return a new select with no clauses
     */
    public static <R> Select<R> fair(long seed) {
        return new Select<>(new AtomicLong(seed));
    }

    /**
     * Adds a clause that receives an item from {@code channel} and returns {@code then} of it. If
     * the channel is closed and drained, this clause commits by throwing {@link ChannelClosed}
     * from {@link #select()}.
     *
     * @param channel the channel to receive from
     * @param then what the select returns for the received item
     * @param <T> the type of the channel's items
     * @return this select
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if this select has already run
     */
    public <T> Select<R> onReceive(Channel<T> channel, Function<? super T, ? extends R> then) {
        Objects.requireNonNull(then, "then");
        return add(new Receive<>(Objects.requireNonNull(channel, "channel"), then, null));
    }

    /**
     * Adds a clause that receives an item from {@code channel} and returns {@code then} of it, or,
     * once the channel is closed and drained, returns {@code whenClosed.get()}.
     *
     * @param channel the channel to receive from
     * @param then what the select returns for the received item
     * @param whenClosed what the select returns when the channel is closed and drained
     * @param <T> the type of the channel's items
     * @return this select
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if this select has already run
     */
    public <T> Select<R> onReceive(
            Channel<T> channel, Function<? super T, ? extends R> then, Supplier<? extends R> whenClosed) {
        Objects.requireNonNull(then, "then");
        Objects.requireNonNull(whenClosed, "whenClosed");
        return add(new Receive<>(Objects.requireNonNull(channel, "channel"), then, whenClosed));
    }

    /**
     * Adds a clause that sends {@code item} to {@code channel} and returns {@code then.get()}. If
     * another clause commits, the item was not sent and is still the caller's. If the channel is
     * closed, this clause commits by throwing {@link ChannelClosed} (the item goes to the
     * channel's undelivered-item hook).
     *
     * @param channel the channel to send to
     * @param item the item to send
     * @param then what the select returns once the item is in the channel
     * @param <T> the type of the channel's items
     * @return this select
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if this select has already run
     */
    public <T> Select<R> onSend(Channel<T> channel, T item, Supplier<? extends R> then) {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(item, "item");
        Objects.requireNonNull(then, "then");
        return add(new Send<>(channel, item, then));
    }

    /**
     * Adds a clause that commits when {@code future} is done and returns {@code then} of its
     * value. A failed or cancelled future makes {@link #select()} throw as
     * {@link Future#await()} would. Seeing the future done consumes nothing: other selects and
     * awaiters see it too.
     *
     * @param future the future to wait for
     * @param then what the select returns for the future's value
     * @param <T> the type of the future's value
     * @return this select
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if this select has already run
     */
    public <T> Select<R> onAwait(Future<T> future, Function<? super T, ? extends R> then) {
        Objects.requireNonNull(future, "future");
        Objects.requireNonNull(then, "then");
        return add(new Await<>(future, then));
    }

    /**
     * Sets the timeout clause: if no other clause is ready within {@code timeout} of the start of
     * a run (on the installed Io's clock, rounded up to whole milliseconds), the run returns
     * {@code then.get()}. Zero or negative: a run that finds nothing ready at once returns it.
     *
     * @param timeout how long a run waits at most
     * @param then what the select returns on timeout
     * @return this select
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if this select has already run or already has a timeout
     */
    public Select<R> onTimeout(Duration timeout, Supplier<? extends R> then) {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(then, "then");
        checkOpen();
        if (this.onTimeout != null) {
            throw new IllegalStateException("a select has at most one timeout clause");
        }
        this.timeout = timeout;
        this.onTimeout = then;
        return this;
    }

    /**
     * Runs this select: suspends the current task (or blocks the current thread) until one clause
     * commits, and returns what that clause makes of it.
     *
     * @return the committed clause's result
     * @throws ChannelClosed if a receive clause without {@code whenClosed} found its channel closed
     *     and drained, or a send clause found its channel closed
     * @throws Cancelled if the current task is cancelled while waiting (nothing was committed),
     *     or an awaited future was cancelled
     * @throws IllegalStateException if this select has no clause at all
     * @throws RuntimeException whatever an awaited future failed with, or a clause's function threw
     */
    public R select() {
        if (!frozen) {
            if (clauses.isEmpty() && onTimeout == null) {
                throw new IllegalStateException("a select needs at least one clause");
            }
            frozen = true;
        }
        Io io = Io.current();
        long deadline = onTimeout == null ? Io.NO_DEADLINE : Deadlines.after(io.nowMs(), timeout);
        // Passed when its timer fired or the reading has passed it, or at once for a timeout of
        // zero or less; never when the reading has only reached it (see Channel.receive(Duration))
        boolean due = onTimeout != null && !timeout.isPositive();
        int[] order = order();
        Object[] links = new Object[clauses.size()];
        boolean[] popped = new boolean[clauses.size()];
        boolean anyPopped = false;
        while (true) {
            for (int k : order) {
                // the last look before the timeout commits is settled: "nothing was ready" holds at one instant
                Object result =
                        due ? clauses.get(k).settledNow() : clauses.get(k).now();
                if (result != NONE) {
                    if (anyPopped) {
                        passOnExcept(k, popped);
                    }
                    return clauses.get(k).finish(result);
                }
            }
            if (due) {
                if (anyPopped) {
                    passOnExcept(-1, popped);
                }
                return onTimeout.get();
            }
            ParkToken token = ParkToken.create(this);
            int committed = -1;
            Object result = null;
            try {
                for (int k : order) {
                    result = clauses.get(k).link(io, token, links, k);
                    if (result != NONE) {
                        committed = k;
                        break;
                    }
                }
            } catch (RuntimeException | Error e) {
                leaveAll(links, popped);
                passOnExcept(-1, popped);
                throw e;
            }
            if (committed >= 0) {
                leaveAll(links, popped);
                passOnExcept(committed, popped);
                return clauses.get(committed).finish(result);
            }
            TimerHandle timer = null;
            try {
                if (deadline != Io.NO_DEADLINE) {
                    timer = io.armTimer(deadline, token); // inside: if it throws, the nodes are taken back
                }
                io.suspendRaw(token);
            } catch (RuntimeException | Error e) {
                leaveAll(links, popped);
                passOnExcept(-1, popped);
                throw e;
            } finally {
                // it fired, or the reading has passed the deadline (see Channel.receive(Duration))
                due = timer != null && (!timer.cancel() || io.nowMs() > deadline);
            }
            anyPopped = leaveAll(links, popped);
        }
    }

    @Override
    public String toString() {
        return "Select[" + (nextSeed == null ? "ordered" : "fair") + ", " + clauses.size() + " clauses"
                + (onTimeout == null ? "" : ", timeout " + timeout) + "]";
    }

    private Select<R> add(Clause<R> clause) {
        checkOpen();
        clauses.add(clause);
        return this;
    }

    private void checkOpen() {
        if (frozen) {
            throw new IllegalStateException("a select cannot be changed once it has run");
        }
    }

    /** This run's order of the clauses: as added, or a fresh permutation from the seeded sequence. */
    private int[] order() {
        int n = clauses.size();
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        if (nextSeed != null && n > 1) {
            SplittableRandom random = new SplittableRandom(nextSeed.getAndAdd(GOLDEN_GAMMA));
            for (int i = n - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int swap = order[i];
                order[i] = order[j];
                order[j] = swap;
            }
        }
        return order;
    }

    /** Takes every registration back; records which nodes a waker popped; returns whether any was. */
    private boolean leaveAll(Object[] links, boolean[] popped) {
        boolean any = false;
        for (int k = 0; k < links.length; k++) {
            Object link = links[k];
            if (link == null) {
                continue;
            }
            links[k] = null;
            boolean wasPopped = clauses.get(k).leave(link);
            popped[k] |= wasPopped;
            any |= popped[k];
        }
        return any;
    }

    /** Passes on the wake-up of every popped clause but {@code committed}; clears the marks. */
    private void passOnExcept(int committed, boolean[] popped) {
        for (int k = 0; k < popped.length; k++) {
            if (popped[k]) {
                popped[k] = false;
                if (k != committed) {
                    clauses.get(k).passOn();
                }
            }
        }
    }

    /** One clause of a select. */
    private abstract static class Clause<R> {
        /** Commits now if it can: its raw result, else NONE. */
        abstract Object now();

        /**
         * As {@link #now}, but fails only if the clause could not commit at one instant (a slot
         * another thread is between claiming and publishing is waited for): the look before the
         * timeout commits, which must not miss an item a finished send left.
         */
        Object settledNow() {
            return now();
        }

        /**
         * Registers to ready {@code token} (storing the registration in {@code links[index]}), or
         * commits at once: its raw result, else NONE.
         */
        abstract Object link(Io io, ParkToken token, Object[] links, int index);

        /** Takes {@code link} back; returns whether a waker had popped it (a wake-up now ours). */
        abstract boolean leave(Object link);

        /** Hands a wake-up this clause will not use to the next waiter. */
        abstract void passOn();

        /** What the select returns (or throws) for this clause's raw result. */
        abstract R finish(Object result);
    }

    /**
     * A clause on a channel's waiter list: it commits through the channel's select halves and
     * waits with a node on {@link #list()}.
     */
    private abstract static class ChannelClause<R> extends Clause<R> {
        /** The channel's attempt that does not wait: a raw result, or null. */
        abstract Object tryNow();

        /** As tryNow, null only if it could not succeed at one instant. */
        abstract Object trySettled();

        @Override
        final Object settledNow() {
            Object result = trySettled();
            return result == null ? NONE : result;
        }

        /** The channel's attempt under the list's lock that links {@code node} if it fails. */
        abstract Object tryLink(Waiters.Node node);

        /** The waiter list this clause's nodes go on. */
        abstract Waiters list();

        @Override
        final Object now() {
            Object result = tryNow();
            return result == null ? NONE : result;
        }

        @Override
        final Object link(Io io, ParkToken token, Object[] links, int index) {
            Waiters.Node node = new Waiters.Node(io, token);
            Object result = tryLink(node);
            if (result == null) {
                links[index] = node;
                return NONE;
            }
            return result;
        }

        @Override
        final boolean leave(Object link) {
            return list().leave((Waiters.Node) link);
        }

        @Override
        final void passOn() {
            list().wakeOne();
        }
    }

    private static final class Receive<T, R> extends ChannelClause<R> {
        private final Channel<T> channel;
        private final Function<? super T, ? extends R> then;
        private final Supplier<? extends R> whenClosed;

        Receive(Channel<T> channel, Function<? super T, ? extends R> then, Supplier<? extends R> whenClosed) {
            this.channel = channel;
            this.then = then;
            this.whenClosed = whenClosed;
        }

        @Override
        Object tryNow() {
            return channel.selectReceiveNow();
        }

        @Override
        Object trySettled() {
            return channel.selectReceiveSettled();
        }

        @Override
        Object tryLink(Waiters.Node node) {
            return channel.selectReceiveLink(node);
        }

        @Override
        Waiters list() {
            return channel.receivers();
        }

        @Override
        R finish(Object result) {
            if (result == Channel.End.CLOSED) {
                if (whenClosed == null) {
                    throw Channel.selectDrained();
                }
                return whenClosed.get();
            }
            @SuppressWarnings("unchecked") // only items of type T are ever in the channel
            T item = (T) result;
            return then.apply(item);
        }
    }

    private static final class Send<T, R> extends ChannelClause<R> {
        private final Channel<T> channel;
        private final T item;
        private final Supplier<? extends R> then;

        Send(Channel<T> channel, T item, Supplier<? extends R> then) {
            this.channel = channel;
            this.item = item;
            this.then = then;
        }

        @Override
        Object tryNow() {
            return channel.selectSendNow(item);
        }

        @Override
        Object trySettled() {
            return channel.selectSendSettled(item);
        }

        @Override
        Object tryLink(Waiters.Node node) {
            return channel.selectSendLink(node, item);
        }

        @Override
        Waiters list() {
            return channel.senders();
        }

        @Override
        R finish(Object result) {
            if (result == Channel.End.CLOSED) {
                throw channel.selectSendClosed(item);
            }
            return then.get();
        }
    }

    private static final class Await<T, R> extends Clause<R> {
        private final Future<T> future;
        private final Function<? super T, ? extends R> then;

        Await(Future<T> future, Function<? super T, ? extends R> then) {
            this.future = future;
            this.then = then;
        }

        @Override
        Object now() {
            return future.isDone() ? future : NONE;
        }

        @Override
        Object link(Io io, ParkToken token, Object[] links, int index) {
            links[index] = future.onDone(() -> io.ready(token));
            return future.isDone() ? future : NONE; // done meanwhile: commit now, in this clause's turn
        }

        @Override
        boolean leave(Object link) {
            ((Registration) link).close();
            return false;
        }

        @Override
        void passOn() {
            // seeing a future done consumes nothing: there is no wake-up to hand on
        }

        @Override
        R finish(Object result) {
            return then.apply(future.await());
        }
    }
}
