package io.weft.samples;

import io.weft.Future;
import io.weft.Io;
import io.weft.TimedOut;
import io.weft.combinators.RetryPolicy;
import io.weft.fiber.FiberIo;
import io.weft.process.Handler;
import io.weft.process.Mailbox;
import io.weft.process.Pid;
import io.weft.process.ProcessContext;
import io.weft.process.ProcessNotFound;
import io.weft.process.Processes;
import io.weft.process.Reply;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Shows processes: a small bank whose accounts are processes addressed by pid, on a virtual-clock
 * FiberIo with one worker, so every run prints the same lines at the same simulated times. A
 * teller moves money with {@code ask} (withdraw, then deposit), a slow auditor makes an
 * {@code ask} time out, an account whose handler fails is restarted after a back-off and reloads
 * its balance from the ledger, and a closed account's pid is refused; the shutdown at the end of
 * the day reports nothing left running. Thread-safe: each run uses
 * its own FiberIo and registry.
 */
public final class Bank {
    private Bank() {}

    /**
     * What the sample found; immutable.
     *
     * @param lines what it printed
     * @param sameEveryRun whether a second run printed the same lines
     * @param balances the balances at the end, by account
     */
    public record Outcome(List<String> lines, boolean sameEveryRun, Map<String, Long> balances) {}

    /** An account's messages. */
    sealed interface Message permits Deposit, Withdraw, Corrupt, Close {}

    /** Adds money. */
    record Deposit(long amount) implements Message {}

    /** Takes money if there is enough; answers whether it did. */
    record Withdraw(long amount, Reply<Boolean> done) implements Message {}

    /** A fault: the account's handler throws on it. */
    record Corrupt() implements Message {}

    /** Closes the account: its process stops. */
    record Close() implements Message {}

    /**
     * Runs the sample twice, printing the first run's lines to {@code out}.
     *
     * @param out where to print
     * @return what the sample found
     */
    public static Outcome run(PrintStream out) {
        Map<String, Long> balances = new LinkedHashMap<>();
        List<String> first = day(balances);
        boolean same = first.equals(day(new LinkedHashMap<>()));
        first.forEach(out::println);
        out.println("a second run printed the same lines: " + same);
        return new Outcome(first, same, balances);
    }

    /** One simulated day at the bank; returns its lines and fills {@code balancesAtClose}. */
    private static List<String> day(Map<String, Long> balancesAtClose) {
        List<String> lines = new ArrayList<>();
        try (FiberIo io = FiberIo.builder().workers(1).virtualClock().build()) {
            Io.with(io).run(() -> {
                Log log = new Log(io, lines);
                Map<String, Long> ledger = new ConcurrentHashMap<>();
                Processes bank = Processes.builder()
                        .deadLetters(letter ->
                                log.line("dead letter to " + letter.to().name() + ": "
                                        + letter.message().getClass().getSimpleName()))
                        .onFailure((pid, failure) -> log.line(pid.name() + " failed: " + failure.getMessage()))
                        .build();
                RetryPolicy restart = RetryPolicy.builder()
                        .maxAttempts(3)
                        .initialDelay(Duration.ofMillis(250))
                        .build();
                Map<String, Pid<Message>> accounts = new LinkedHashMap<>();
                for (String name : List.of("alice", "bob", "carol")) {
                    ledger.put(name, 100L);
                    accounts.put(name, bank.spawn(name, Mailbox.bounded(16), restart, () -> {
                        log.line(name + " opens with " + ledger.get(name));
                        return new Account(name, ledger);
                    }));
                }
                Pid<Reply<String>> auditor = bank.spawn("auditor", () -> (self, report) -> {
                    Io.sleep(Duration.ofSeconds(2)); // slow: longer than anyone waits
                    report.complete("all good");
                });

                transfer(bank, log, accounts, "alice", "bob", 30);
                transfer(bank, log, accounts, "carol", "alice", 500); // not enough money
                Io.sleep(Duration.ofSeconds(1));

                bank.send(accounts.get("bob"), new Corrupt()); // fails; restarted after 250 ms
                transfer(bank, log, accounts, "bob", "carol", 50); // waits in bob's mailbox meanwhile

                try {
                    bank.<Reply<String>, String>ask(auditor, reply -> reply, Duration.ofMillis(500))
                            .await();
                } catch (TimedOut slow) {
                    log.line("audit: " + slow.getMessage());
                }

                Pid<Message> carol = accounts.get("carol");
                Future<Void> carolClosed = bank.termination(carol);
                bank.send(carol, new Close());
                carolClosed.await();
                try {
                    bank.send(carol, new Deposit(1));
                } catch (ProcessNotFound refused) {
                    log.line("deposit refused: " + refused.getMessage());
                }
                List<Pid<?>> stuck = bank.shutdown(Duration.ofSeconds(1));
                log.line("bank shut down; processes still running: " + stuck);
                for (String name : List.of("alice", "bob", "carol")) {
                    balancesAtClose.put(name, ledger.get(name));
                }
                log.line("closing balances " + balancesAtClose);
            });
        }
        return lines;
    }

    /** Moves {@code amount} with ask (withdraw) then send (deposit), and logs the outcome. */
    private static void transfer(
            Processes bank, Log log, Map<String, Pid<Message>> accounts, String from, String to, long amount) {
        Future<Boolean> withdrawn = bank.<Message, Boolean>ask(
                accounts.get(from), done -> new Withdraw(amount, done), Duration.ofSeconds(5));
        if (withdrawn.await()) {
            bank.send(accounts.get(to), new Deposit(amount));
            log.line("moved " + amount + " from " + from + " to " + to);
        } else {
            log.line(from + " cannot pay " + amount);
        }
    }

    /** An account: its balance lives in the ledger, so a restarted account picks it up again. */
    private record Account(String name, Map<String, Long> ledger) implements Handler<Message> {
        @Override
        public void handle(ProcessContext<Message> self, Message message) {
            long balance = ledger.get(name);
            switch (message) {
                case Deposit deposit -> ledger.put(name, balance + deposit.amount());
                case Withdraw withdraw -> {
                    boolean enough = balance >= withdraw.amount();
                    if (enough) {
                        ledger.put(name, balance - withdraw.amount());
                    }
                    withdraw.done().complete(enough);
                }
                case Corrupt corrupt -> throw new IllegalStateException("corrupt record in " + name);
                case Close close -> self.stop();
            }
        }
    }

    /** Lines stamped with the virtual time. */
    private record Log(Io io, List<String> lines) {
        void line(String text) {
            synchronized (lines) {
                lines.add(String.format("[%5d ms] %s", io.nowMs(), text));
            }
        }
    }
}
