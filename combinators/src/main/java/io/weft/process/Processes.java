package io.weft.process;

import io.weft.Cancelled;
import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.combinators.RetryPolicy;
import io.weft.combinators.internal.Deadlines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * A registry of processes: each is a typed mailbox with a {@link Pid}, whose messages a
 * {@link Handler} takes one at a time in a task of the Io it was spawned on. The registry routes
 * {@link #send} by pid and wakes the process if it is idle, answers {@link #ask} with a timeout,
 * reports failures and restarts by policy, and {@link #shutdown shuts} everything down with a
 * deadline. Thread-safe.
 *
 * {@snippet :
 * try (Processes processes = Processes.create()) {
 *     Pid<Counter.Msg> counter = processes.spawn("counter", () -> new Counter());
 *     processes.send(counter, new Counter.Add(5));
 *     long total = processes.<Counter.Msg, Long>ask(counter, Counter.Get::new, Duration.ofSeconds(1)).await();
 * }
 * }
 *
 * <p><b>Running.</b> A process holds no thread and no task while its mailbox is empty. The send
 * that finds it idle starts one task on the process's Io (the installed Io at {@link #spawn}),
 * which handles messages until the mailbox is empty (yielding every 64 messages, so a busy process
 * shares its worker), then ends; the next send starts another. On {@code BlockingIo} that task
 * runs inline, inside the {@code send} that started it, so processes work there too: a send to an
 * idle process returns after its handler has handled it (and whatever that queued).
 *
 * <p><b>Nothing is lost silently.</b> A send to a pid that never existed here or has ended throws
 * {@link ProcessNotFound} (the message is still the caller's). A message that was delivered but
 * never handled, because its process ended with it queued, or because its handler failed on it,
 * goes to the registry's dead-letter handler (by default, logged through {@link System.Logger} at
 * WARNING). A handler's failure goes to the failure handler (by default, the Io's
 * uncaught-exception handler, else the thread's).
 *
 * <p><b>Failures and restarts.</b> When a handler throws, the process is restarted if its
 * {@link RetryPolicy} allows another attempt for that failure ({@code maxAttempts} counts the
 * handlers a process may have in its life): after the policy's back-off, slept on the Io's clock,
 * a fresh handler is built from the process's factory, with the same pid and mailbox (the messages
 * that waited are handled by the new handler). Otherwise the process ends, failed.
 *
 * <p><b>Ending.</b> A process ends when its handler {@linkplain ProcessContext#stop() stops} it,
 * when it fails for good (its last handler's failure, or a restart that throws: its behavior or
 * its policy's {@code retryOn}, reported like a handler's failure), when its Io refuses to run it
 * (a send after that Io closed), or at {@link #shutdown}. Its {@linkplain #termination termination
 * future} then completes (with the failure, if it failed), later sends throw
 * {@code ProcessNotFound}, and its pid is never reused.
 */
public final class Processes implements AutoCloseable {
    /*
     * Implementation notes.
     *
     * Scheduling (the seed's Idle -> Ready on send): each process has an AtomicInteger `pending`,
     * the number of messages put into its mailbox and not yet handled. A sender puts the message,
     * then increments; the one whose increment goes 0 -> 1 starts a run (a task). A run takes a
     * message, handles it, and decrements; when its decrement reaches 0 it ends, and the process
     * is idle. So at most one run exists per process at any time (runs start only on 0 -> 1 and
     * end only on -> 0), it never finds the mailbox empty while pending > 0 (a message is
     * published before its put returns, so before the increment), and no message is stranded: a
     * message counted after a run's last decrement went 0 -> 1 and started a new run. A run that
     * has reached 0 may still be in its finally when the next run starts: it clears `running`
     * only if it still holds its own task there (CAS), so shutdown can cancel the new run.
     *
     * Ending (end(), at most once, by CAS on `ended`): close the mailbox (later puts fail, so later
     * sends throw ProcessNotFound), unregister, drain what is left into dead letters, complete the
     * termination future. Who ends:
     *   - the run itself, when its handler stopped the process or failed for good, or when it finds
     *     `stopping` set (shutdown, or stop from a handler) at the top of its loop or on the way
     *     out (its finally);
     *   - the run, when its restart throws (the behavior or the policy's retryOn): it ends failed
     *     with that, which is reported too (else no run would ever come: `pending` stays above 0);
     *   - the sender whose run the Io refused (closed): no run would come either;
     *   - shutdown(), or ProcessContext.stop() called while no message is being handled, for a
     *     process with no run (pending == 0 after `stopping` was set): then no run can start
     *     behind its back and still see `stopping` unset. The orderings are seq_cst: they write
     *     `stopping` before reading `pending`; a sender's increment they did not see comes after
     *     that read, and the run it starts reads `stopping` after that.
     * The mailbox has one consumer at a time: the run, or whoever ends the process (a run that
     * sees `stopping` takes nothing more from the mailbox).
     *
     * Shutdown cancels the task of every run (each run publishes its task in `running`), then
     * waits for every termination future until the deadline; those still pending are reported.
     *
     * Per send to a busy process: one mailbox put (unbounded: one CAS) and one getAndIncrement;
     * per message handled, a poll and one decrementAndGet. Settling the count once per batch
     * instead (one RMW per batch; the count may then dip below 0 while a sender is between its put
     * and its increment) measured the same in MailboxThroughput (694 +- 236 vs 722 +- 500 us/op,
     * 3 forks), so the simpler form stays: the cost there is moving each message between cores.
     */

    private static final System.Logger LOG = System.getLogger(Processes.class.getName());
    /** Messages a run handles before it yields its worker to other tasks. */
    private static final int BATCH = 64;

    private static final RetryPolicy NEVER =
            RetryPolicy.builder().maxAttempts(1).build();

    private final ConcurrentHashMap<Long, Proc<?>> live = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final Consumer<? super DeadLetter> deadLetters;
    private final BiConsumer<? super Pid<?>, ? super Throwable> onFailure;
    private volatile boolean closed;

    private Processes(Builder builder) {
        this.deadLetters = builder.deadLetters;
        this.onFailure = builder.onFailure;
    }

    /**
     * A registry with the default handlers: dead letters are logged, failures go to the Io's (or
     * the thread's) uncaught-exception handler.
     *
     * @return a new, empty registry
     */
    public static Processes create() {
        return builder().build();
    }

    /**
     * A builder for a registry with its own dead-letter and failure handlers.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Spawns a process with an unbounded mailbox that is never restarted.
     *
     * @param name the process's name, for people
     * @param behavior builds the process's handler
     * @param <M> the type of the messages it receives
     * @return its pid
     * @throws NullPointerException if an argument is null
     * @throws IllegalStateException if the registry is shut down
     */
    public <M> Pid<M> spawn(String name, Supplier<? extends Handler<M>> behavior) {
        return spawn(name, Mailbox.unbounded(), NEVER, behavior);
    }

    /**
     * Spawns a process on the installed Io.
     *
     * @param name the process's name, for people
     * @param mailbox the kind of its mailbox
     * @param restart when it is restarted after a failure, and the back-off before each restart
     *     ({@code maxAttempts} counts the handlers it may have; 1 means never restarted)
     * @param behavior builds its handler, now and at every restart
     * @param <M> the type of the messages it receives
     * @return its pid
     * @throws NullPointerException if an argument is null, or {@code behavior} returns null
     * @throws IllegalStateException if the registry is shut down
     * @throws IllegalArgumentException if a bounded mailbox's capacity is beyond what a channel
     *     can hold ({@link io.weft.channel.Channel#bounded})
     */
    public <M> Pid<M> spawn(
            String name, Mailbox mailbox, RetryPolicy restart, Supplier<? extends Handler<M>> behavior) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mailbox, "mailbox");
        Objects.requireNonNull(restart, "restart");
        Objects.requireNonNull(behavior, "behavior");
        if (closed) {
            throw new IllegalStateException("the registry is shut down: cannot spawn " + name);
        }
        Pid<M> pid = new Pid<>(ids.incrementAndGet(), name);
        Proc<M> process = new Proc<>(pid, Io.current(), mailbox.<M>newQueue(), restart, behavior);
        live.put(pid.id(), process);
        if (closed) { // a shutdown began meanwhile and may not have seen this process
            process.requestStop();
            process.endIfIdle("its registry shut down");
            throw new IllegalStateException("the registry is shut down: cannot spawn " + name);
        }
        return pid;
    }

    /**
     * Sends {@code message} to {@code to}, suspending while its bounded mailbox is full; starts the
     * process if it is idle (on {@code BlockingIo}: handles the message before returning).
     *
     * @param to the receiving process
     * @param message the message
     * @param <M> the message type
     * @throws ProcessNotFound if no live process has that pid (the message was not delivered)
     * @throws IllegalStateException (or what else the Io throws) if the process's Io refuses to run
     *     it, closed: the process then ends and the message goes to the dead letters
     * @throws Cancelled if the current task is cancelled while waiting for room
     * @throws NullPointerException if an argument is null
     */
    public <M> void send(Pid<M> to, M message) {
        Objects.requireNonNull(message, "message");
        Proc<M> process = find(to);
        if (!process.queue.put(message)) {
            throw ended(to);
        }
        process.delivered();
    }

    /**
     * Sends {@code message} to {@code to} if its mailbox has room now; never waits for room.
     *
     * @param to the receiving process
     * @param message the message
     * @param <M> the message type
     * @return true if delivered, false if the bounded mailbox was full (the message is still the
     *     caller's)
     * @throws ProcessNotFound if no live process has that pid
     * @throws NullPointerException if an argument is null
     */
    public <M> boolean trySend(Pid<M> to, M message) {
        Objects.requireNonNull(message, "message");
        Proc<M> process = find(to);
        int put = process.queue.tryPut(message);
        if (put < 0) {
            throw ended(to);
        }
        if (put == 0) {
            return false;
        }
        process.delivered();
        return true;
    }

    /**
     * Request-reply: sends {@code to} the message {@code request} builds around a fresh
     * {@link Reply}, and returns a future of the answer. The future fails with {@link TimedOut} if
     * no answer comes within {@code timeout} on the installed Io's clock (a late answer is then
     * ignored), and with the process's {@link Reply#fail failure} if it gives one; cancelling it
     * stops the wait. The message is sent before this returns, as {@link #send} does.
     *
     * @param to the process to ask
     * @param request builds the message from the reply slot
     * @param timeout how long to wait for the answer
     * @param <M> the message type
     * @param <R> the answer type
     * @return the answer's future
     * @throws ProcessNotFound if no live process has that pid
     * @throws NullPointerException if an argument is null, or {@code request} returns null
     */
    public <M, R> Future<R> ask(Pid<M> to, Function<? super Reply<R>, ? extends M> request, Duration timeout) {
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(timeout, "timeout");
        Reply<R> reply = new Reply<>();
        M message = Objects.requireNonNull(request.apply(reply), "the request built no message");
        send(to, message);
        Future<R> answer = reply.future();
        return Io.async(() -> {
            try {
                return answer.await(timeout);
            } catch (TimedOut late) {
                throw new TimedOut(to + " did not answer within " + timeout);
            }
        });
    }

    /**
     * Whether {@code pid} names a live process of this registry.
     *
     * @param pid the pid
     * @return true until the process has ended
     */
    public boolean isAlive(Pid<?> pid) {
        Proc<?> process = live.get(pid.id());
        return process != null && !process.ended.get();
    }

    /**
     * The pids of the live processes, in no particular order.
     *
     * @return a snapshot
     */
    public List<Pid<?>> processes() {
        List<Pid<?>> pids = new ArrayList<>();
        for (Proc<?> process : live.values()) {
            pids.add(process.pid);
        }
        return pids;
    }

    /**
     * The future that completes when {@code pid}'s process ends: with null when it was stopped or
     * shut down, with its last failure when it failed for good. Ask for it while the process is
     * alive (right after {@link #spawn}, typically) and keep it. It fails with the Io's refusal if
     * the process ended because its Io would not run it. Each call returns a new future:
     * cancelling one completes only that one, as cancelled, and ends nothing.
     *
     * @param pid a live process
     * @return its termination future
     * @throws ProcessNotFound if no live process has that pid
     */
    public Future<Void> termination(Pid<?> pid) {
        return find(pid).termination(); // a view of its own: cancelling it affects no other caller
    }

    /**
     * Shuts every process down: no more spawns; every process is told to stop (later sends throw
     * {@link ProcessNotFound}), the handler running now is cancelled, and what is left in each
     * mailbox goes to the dead letters. Waits up to {@code timeout} (on the installed Io's clock)
     * for every process to end.
     *
     * @param timeout how long to wait at most
     * @return the processes that did not end within the timeout (a handler that ignores its
     *     cancellation, such as one inside {@code Io.shield}); empty if all ended
     * @throws NullPointerException if {@code timeout} is null
     */
    public List<Pid<?>> shutdown(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        Io io = Io.current();
        long deadline = Deadlines.after(io.nowMs(), timeout);
        closed = true;
        List<Proc<?>> all = new ArrayList<>(live.values());
        for (Proc<?> process : all) {
            process.requestStop();
            process.endIfIdle("its registry shut down");
            process.cancelRun();
        }
        List<Pid<?>> notEnded = new ArrayList<>();
        for (Proc<?> process : all) {
            Future<Void> termination = process.termination(); // its own: a user's cancel of theirs does not count
            try {
                if (deadline == Io.NO_DEADLINE) {
                    termination.await();
                } else {
                    termination.await(Duration.ofMillis(Math.max(0, deadline - io.nowMs())));
                }
            } catch (Throwable e) { // await throws only unchecked ones
                if (!process.terminated.isDone()) {
                    if (e instanceof TimedOut) {
                        notEnded.add(process.pid);
                        continue;
                    }
                    throw e; // the caller's own cancellation (or a plain thread's interrupt): not an end
                }
                // it ended with a failure (an Error, a TimedOut of its own too), reported when it happened
            }
        }
        return notEnded;
    }

    /**
     * {@linkplain #shutdown Shuts down} with a 10-second timeout.
     *
     * @throws IllegalStateException if some process did not end within it (named in the message)
     */
    @Override
    public void close() {
        List<Pid<?>> notEnded = shutdown(Duration.ofSeconds(10));
        if (!notEnded.isEmpty()) {
            throw new IllegalStateException("processes did not end within 10 s of the shutdown: " + notEnded);
        }
    }

    @Override
    public String toString() {
        return "Processes[" + live.size() + " live" + (closed ? ", shut down]" : "]");
    }

    @SuppressWarnings("unchecked") // a Pid<M> was registered with a Proc<M>
    private <M> Proc<M> find(Pid<M> pid) {
        Objects.requireNonNull(pid, "pid");
        Proc<?> process = live.get(pid.id());
        if (process == null || !process.pid.equals(pid)) {
            throw new ProcessNotFound("no process " + pid + " in this registry (never spawned here, or ended)");
        }
        return (Proc<M>) process;
    }

    private static ProcessNotFound ended(Pid<?> pid) {
        return new ProcessNotFound("process " + pid + " has ended");
    }

    private void deadLetter(Pid<?> to, Object message, String reason) {
        try {
            deadLetters.accept(new DeadLetter(to, message, reason));
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "the dead-letter handler threw", e);
        }
    }

    private void reportFailure(Pid<?> pid, Throwable failure) {
        try {
            onFailure.accept(pid, failure);
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "the failure handler threw", e);
        }
    }

    /** The default failure handler: the Io's uncaught-exception handler, else the thread's. */
    private static void toUncaughtHandler(Pid<?> pid, Throwable failure) {
        Thread self = Thread.currentThread();
        Thread.UncaughtExceptionHandler handler = Io.current().uncaughtExceptionHandler();
        (handler != null ? handler : self.getUncaughtExceptionHandler()).uncaughtException(self, failure);
    }

    /** One process: its mailbox, scheduling count, handler and end. See the notes. */
    final class Proc<M> {
        final Pid<M> pid;
        final MessageQueue<M> queue;
        private final Io io;
        private final RetryPolicy restart;
        private final Supplier<? extends Handler<M>> behavior;
        private final RandomGenerator random;
        private final ProcessContext<M> context;
        private final AtomicInteger pending = new AtomicInteger();
        final AtomicBoolean ended = new AtomicBoolean();
        /** Completed by end(); the termination futures handed out are views of it. */
        private final CompletableFuture<Void> terminated = new CompletableFuture<>();

        private volatile boolean stopping;
        /** The task of the current run, or null; for shutdown's cancel. */
        private final AtomicReference<Future<?>> running = new AtomicReference<>();
        /** Written only by runs (one at a time); read by the handler through its context. */
        volatile int restarts;
        /** Used only by runs, one at a time. */
        private Handler<M> handler;

        Proc(Pid<M> pid, Io io, MessageQueue<M> queue, RetryPolicy restart, Supplier<? extends Handler<M>> behavior) {
            this.pid = pid;
            this.io = io;
            this.queue = queue;
            this.restart = restart;
            this.behavior = behavior;
            this.random = restart.random().get();
            this.context = new ProcessContext<>(Processes.this, this);
            this.handler = Objects.requireNonNull(behavior.get(), "the behavior built no handler");
        }

        Future<Void> termination() {
            return Future.from(terminated);
        }

        /**
         * After a put: count the message, and start a run if the process was idle. If the Io
         * refuses the run (closed), no run would ever come: the process ends, and its mailbox,
         * this message included, goes to the dead letters; the caller gets the refusal.
         */
        void delivered() {
            if (pending.getAndIncrement() != 0) {
                return;
            }
            if (Io.current() == io) {
                try {
                    Io.async(this::run);
                } catch (RuntimeException | Error refused) {
                    end("its Io refused to run it: " + refused, refused);
                    throw refused;
                }
                return;
            }
            AtomicBoolean spawned = new AtomicBoolean(); // final once the root task returned or threw
            try {
                Io.with(io).call(() -> {
                    Io.async(this::run);
                    spawned.set(true);
                    return null;
                });
            } catch (RuntimeException | Error refused) {
                // Only if no run was spawned: a sender cancelled while its root task spawned one
                // throws too, and that run owns the mailbox now
                if (!spawned.get()) {
                    end("its Io refused to run it: " + refused, refused);
                }
                throw refused;
            }
        }

        void requestStop() {
            stopping = true;
            queue.close();
        }

        /** Ends the process now if no run exists; see the notes for why that cannot race a run. */
        void endIfIdle(String reason) {
            if (pending.get() == 0) {
                end(reason, null);
            }
        }

        void cancelRun() {
            Future<?> task = running.get();
            if (task != null) {
                task.cancel();
            }
        }

        /** One run: handles messages until none is pending (or the process ends). */
        private Void run() {
            Future<?> me = Io.currentTask().orElse(null);
            running.set(me);
            String endReason = "it was stopped";
            try {
                for (int handled = 1; ; handled++) {
                    if (stopping) {
                        return null;
                    }
                    M message = queue.poll();
                    if (message == null) { // only after a close: what was pending is left to end()
                        return null;
                    }
                    if (!handle(message)) {
                        return null; // ended for good
                    }
                    if (pending.decrementAndGet() == 0) {
                        return null;
                    }
                    if (handled % BATCH == 0) {
                        Io.yield();
                    }
                }
            } catch (Cancelled cancelled) { // shutdown (or the Io closing) cancelled this run
                stopping = true;
                endReason = "its registry shut down";
                return null;
            } catch (Throwable restartFailed) { // the restart threw (the behavior, the policy's retryOn)
                reportFailure(pid, restartFailed);
                end("it could not be restarted: " + restartFailed, restartFailed);
                return null;
            } finally {
                running.compareAndSet(me, null); // a run started after this one's count reached 0 keeps its own
                if (stopping) {
                    end(endReason, null);
                }
            }
        }

        /** Handles one message; on failure, reports and restarts or ends. Returns false if ended. */
        private boolean handle(M message) throws Cancelled {
            try {
                handler.handle(context, message);
                return true;
            } catch (Cancelled cancelled) {
                if (stopping) {
                    throw cancelled;
                }
                return failed(message, cancelled);
            } catch (Throwable failure) { // the handler's failure is the process's, reported below
                return failed(message, failure);
            }
        }

        private boolean failed(M message, Throwable failure) {
            reportFailure(pid, failure);
            deadLetter(pid, message, "its handler failed on it: " + failure);
            int handlers = restarts + 1;
            boolean again = handlers < restart.maxAttempts()
                    && !(failure instanceof Cancelled)
                    && restart.retryOn().test(failure);
            if (!again) {
                end("it failed: " + failure, failure);
                return false;
            }
            Io.sleep(restart.delayAfter(handlers, random)); // on the Io's clock; Cancelled at shutdown
            if (stopping) {
                return false; // stopped meanwhile (a zero back-off is no suspend point): no new handler
            }
            handler = Objects.requireNonNull(behavior.get(), "the behavior built no handler");
            restarts = handlers;
            return true;
        }

        /** Ends the process, once; see the notes. */
        void end(String reason, Throwable failure) {
            if (!ended.compareAndSet(false, true)) {
                return;
            }
            stopping = true;
            queue.close();
            live.remove(pid.id(), this);
            for (M left : queue.drain()) {
                deadLetter(pid, left, "its process ended before taking it: " + reason);
            }
            if (failure == null) {
                terminated.complete(null);
            } else {
                terminated.completeExceptionally(failure);
            }
        }
    }

    /** Builds a {@link Processes} registry. */
    public static final class Builder {
        private Consumer<? super DeadLetter> deadLetters = letter -> LOG.log(
                System.Logger.Level.WARNING,
                "dead letter to {0}: {1} ({2})",
                letter.to(),
                letter.message(),
                letter.reason());
        private BiConsumer<? super Pid<?>, ? super Throwable> onFailure = Processes::toUncaughtHandler;

        private Builder() {}

        /**
         * Where messages that were delivered but never handled go (see {@link DeadLetter}). It runs
         * on the thread that ended the process (or whose handler failed); keep it short.
         *
         * @param handler the dead-letter handler
         * @return this builder
         * @throws NullPointerException if {@code handler} is null
         */
        public Builder deadLetters(Consumer<? super DeadLetter> handler) {
            this.deadLetters = Objects.requireNonNull(handler, "handler");
            return this;
        }

        /**
         * Where a handler's failure is reported, before the process is restarted or ends. It runs
         * in the failing process's task.
         *
         * @param handler the failure handler
         * @return this builder
         * @throws NullPointerException if {@code handler} is null
         */
        public Builder onFailure(BiConsumer<? super Pid<?>, ? super Throwable> handler) {
            this.onFailure = Objects.requireNonNull(handler, "handler");
            return this;
        }

        /**
         * Builds the registry.
         *
         * @return a new, empty registry
         */
        public Processes build() {
            return new Processes(this);
        }
    }
}
