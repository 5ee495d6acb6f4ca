package io.weft.samples;

import java.io.PrintStream;

/**
 * Runs every sample in order, printing to standard output: the main class of
 * {@code weft-samples.jar}. Not meant to be run by several threads at once into one stream (their
 * lines would interleave).
 *
 * {@snippet lang = "shell" :
 * java -jar samples/target/weft-samples.jar
 * }
 */
public final class Samples {
    private Samples() {}

    /**
     * Runs every sample, printing to {@link System#out}.
     *
     * @param args ignored
     * @throws InterruptedException if the main thread is interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        runAll(System.out);
    }

    /**
     * Runs every sample in order, each under a heading, printing to {@code out}.
     *
     * @param out where to print
     * @throws InterruptedException if the calling thread is interrupted
     */
    public static void runAll(PrintStream out) throws InterruptedException {
        heading(out, "quotes: Io.async look-ups and Io.race");
        Quotes.run(out);
        out.println();
        heading(out, "cancellation: cancel a sleeping task, finally, Cancelled, Io.shield");
        Cancellation.run(out);
        out.println();
        heading(out, "virtual clock: hours of sleeps in no time");
        VirtualClock.run(out);
        out.println();
        heading(out, "fibers: the same code on FiberIo, where tasks run at the same time");
        Fibers.run(out);
        out.println();
        heading(out, "simulation: Io.with on a virtual-clock FiberIo, and seeds that find an ordering bug");
        Simulated.run(out);
        out.println();
        heading(out, "pipeline: channels, a timeout and a structured scope");
        Pipeline.run(out);
        out.println();
        heading(out, "streaming: a producer task into a Flow subscriber, paced by its demand");
        Streaming.run(out);
        out.println();
        heading(out, "bank: account processes addressed by pid, ask with a timeout, a restart");
        Bank.run(out);
    }

    private static void heading(PrintStream out, String title) {
        out.println("== " + title);
    }
}
