package io.weft.benchmarks;

import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * What every benchmark class here extends: one place for the JVM its forks run in, so that every
 * peer of every workload gets the same one. FiberIo's {@code --add-opens} (DESIGN §4), and
 * {@link Peers#WORKERS} threads for the two peers whose thread count only a system property sets:
 * the JDK's default virtual-thread scheduler and kotlinx's {@code Dispatchers.Default}. Each
 * instance is its benchmark's state (one per trial). JMH reads these annotations through
 * inheritance ({@code @Fork} and {@code @State} are {@code @Inherited}); a subclass adds its mode,
 * time unit and {@code peer} parameter.
 */
@State(Scope.Benchmark)
@Fork(
        jvmArgsAppend = {
            "--add-opens",
            "java.base/java.lang=ALL-UNNAMED",
            "-Djdk.virtualThreadScheduler.parallelism=" + Peers.WORKERS,
            "-Dkotlinx.coroutines.scheduler.core.pool.size=" + Peers.WORKERS
        })
public abstract class PeerBenchmark {}
