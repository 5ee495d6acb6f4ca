package io.weft.benchmarks

import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicReferenceArray
import kotlin.coroutines.Continuation
import kotlin.coroutines.resume
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.flow.filter
import kotlinx.coroutines.flow.fold
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.joinAll
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.selects.select
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.yield

/**
 * The kotlinx.coroutines peer: every workload written the way a Kotlin user writes it, on
 * `Dispatchers.Default` (its work-stealing CoroutineScheduler), sized to [Peers.WORKERS] threads by
 * `-Dkotlinx.coroutines.scheduler.core.pool.size` in the `@Fork` of `PeerBenchmark`, which every
 * benchmark class extends. "Inside a task" means inside `runBlocking(Dispatchers.Default)`, whose
 * body is a coroutine on the dispatcher; "remote" means `scope.async` from the benchmark thread,
 * outside any coroutine. Not thread-safe: made and closed by [Peers].
 */
class KotlinPeer : AutoCloseable {
    /** The scope remote spawns go to: what a service would hold for work started from plain threads. */
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)

    // ---------------------------------------------------------------- Tokio suite

    /** spawn_many_local: [TokioSuite.SPAWNS] `async { 1 }` from inside a coroutine, all awaited by it. */
    fun spawnManyLocal(): Long = runBlocking(Dispatchers.Default) {
        List(TokioSuite.SPAWNS) { async { 1 } }.sumOf { it.await().toLong() }
    }

    /** spawn_many_remote: [TokioSuite.SPAWNS] `scope.async { 1 }` from this plain thread, then awaited. */
    fun spawnManyRemote(): Long {
        val tasks = List(TokioSuite.SPAWNS) { scope.async { 1 } }
        return runBlocking { tasks.sumOf { it.await().toLong() } }
    }

    /**
     * yield_many: [TokioSuite.YIELD_TASKS] coroutines each calling `yield()` [TokioSuite.YIELDS] times,
     * started with `scope.async` from this plain thread (as every peer starts them) and awaited here.
     */
    fun yieldMany(): Long {
        val tasks = List(TokioSuite.YIELD_TASKS) {
            scope.async {
                var yields = 0
                repeat(TokioSuite.YIELDS) {
                    yield()
                    yields++
                }
                yields
            }
        }
        return runBlocking { tasks.sumOf { it.await().toLong() } }
    }

    /**
     * ping_pong: two coroutines pass a turn [TokioSuite.PING_PONG_ROUNDS] times by suspend/resume,
     * started with `scope.async` from this plain thread (as every peer starts them) and awaited here.
     */
    fun pingPong(): Long {
        val turns = ContinuationTurns()
        val ping = scope.async { turns.play(0) }
        val pong = scope.async { turns.play(1) }
        return runBlocking { (ping.await() + pong.await().toLong()) / 2 }
    }

    /** chained_spawn: each coroutine launches the next and ends; the last completes [done]. */
    fun chainedSpawn(left: Int, done: CompletableFuture<Int>) {
        scope.launch {
            if (left == 1) done.complete(TokioSuite.CHAIN_DEPTH) else chainedSpawn(left - 1, done)
        }
    }

    /** A busy task for spawn_many_remote_busy: spins a slice, then `yield()`, until [spinning] says stop. */
    fun startSpinner(spinning: () -> Boolean, spin: Runnable): Job = scope.launch {
        while (spinning()) {
            spin.run()
            yield()
        }
    }

    // ---------------------------------------------------------------- futures

    /** Chain of awaits: each `async` awaits the previous one's value and adds one. */
    fun awaitChain(): Int = runBlocking(Dispatchers.Default) {
        var previous: Deferred<Int> = async { 0 }
        for (i in 1 until Futures.CHAIN_LENGTH) {
            val before = previous
            previous = async { before.await() + 1 }
        }
        previous.await()
    }

    /** Races: `select` on a winner and a loser in `delay(1 h)`; the loser is cancelled. */
    fun race(): Long = runBlocking(Dispatchers.Default) {
        var total = 0L
        for (index in 0 until Futures.RACES) {
            val winner = async { index }
            val loser = async {
                delay(Futures.LOSER_DELAY.toMillis())
                -1
            }
            total += select<Int> {
                winner.onAwait { it }
                loser.onAwait { it }
            }
            loser.cancel()
        }
        total
    }

    /** Fan-out/fan-in: [Futures.FAN_OUT] `async { index }`, `awaitAll`, summed. */
    fun fanOutFanIn(): Long = runBlocking(Dispatchers.Default) {
        List(Futures.FAN_OUT) { index -> async { index } }.awaitAll().sumOf { it.toLong() }
    }

    /** Recursive fork/join: fib([n]) forking one half with `async`, computing the other, then `await`. */
    fun fib(n: Int): Int = runBlocking(Dispatchers.Default) { fibIn(n) }

    private suspend fun fibIn(n: Int): Int {
        if (n < 2) return n
        return coroutineScope {
            val first = async { fibIn(n - 1) }
            val second = fibIn(n - 2)
            first.await() + second
        }
    }

    // ---------------------------------------------------------------- channel and flow

    /** Channel MPMC: [ChannelMpmc.ITEMS] items through `Channel(capacity)`, [producers] × [consumers]. */
    fun channel(producers: Int, consumers: Int, capacity: Int): Long = runBlocking(Dispatchers.Default) {
        val channel = Channel<Int>(capacity)
        val sending = List(producers) { first ->
            launch {
                var i = first
                while (i < ChannelMpmc.ITEMS) {
                    channel.send(i)
                    i += producers
                }
            }
        }
        val receiving = List(consumers) {
            async {
                var sum = 0L
                for (item in channel) sum += item
                sum
            }
        }
        sending.joinAll()
        channel.close()
        receiving.sumOf { it.await() }
    }

    /**
     * Mailbox throughput as a Channel-based actor: one coroutine sums what arrives on a
     * `Channel(UNLIMITED)`; [senders] coroutines send [perSender] numbers each; closed at the end.
     */
    fun mailbox(senders: Int, perSender: Int): Long = runBlocking(Dispatchers.Default) {
        val mailbox = Channel<Long>(Channel.UNLIMITED)
        val actor = async {
            var sum = 0L
            for (m in mailbox) sum += m
            sum
        }
        List(senders) {
            launch {
                for (i in 0 until perSender) mailbox.send(i.toLong())
            }
        }.joinAll()
        mailbox.close()
        actor.await()
    }

    /**
     * The Publisher pipeline as a Flow: `buffer(256)` (a coroutine and a channel: the asynchronous,
     * backpressured hop) before each operator, collected on the dispatcher.
     */
    fun pipeline(): Long = runBlocking(Dispatchers.Default) {
        (0 until PublisherThroughput.ITEMS).asFlow()
            .buffer(PublisherThroughput.BUFFER).map { it + 1 }
            .buffer(PublisherThroughput.BUFFER).filter { it % 3 != 0 }
            .buffer(PublisherThroughput.BUFFER).map { it * 2 }
            .buffer(PublisherThroughput.BUFFER) // a fourth hop, to the collector, as Weft's pipeline has
            .fold(0L) { sum, x -> sum + x }
    }

    // ---------------------------------------------------------------- memory

    /**
     * Starts one coroutine per slot of [suspended] that each suspend in `suspendCancellableCoroutine` after counting
     * down [arrived]; their continuations land in [suspended]. [release] resumes them all.
     */
    fun startSuspended(suspended: Suspended, arrived: CountDownLatch) {
        for (index in 0 until suspended.continuations.size) {
            suspended.tasks.add(scope.async {
                suspendCancellableCoroutine<Int> { continuation ->
                    suspended.continuations[index] = continuation
                    arrived.countDown()
                }
            })
        }
    }

    /** The coroutines of one memory cycle. */
    class Suspended(count: Int) {
        // both made before the heap is read, as the other peers' arrays and lists are: bookkeeping, not task memory
        internal val continuations = arrayOfNulls<Continuation<Int>>(count)
        internal val tasks = ArrayList<Deferred<Int>>(count)

        /** Resumes every coroutine with 1 and returns the sum of their results. */
        fun release(): Long {
            for (continuation in continuations) continuation!!.resume(1)
            return runBlocking { tasks.sumOf { it.await().toLong() } }
        }
    }

    override fun close() {
        scope.cancel()
    }

    companion object {
        /** Waits for [job] from a plain thread. */
        @JvmStatic
        fun join(job: Job) = runBlocking { job.join() }
    }
}

/** Two coroutines taking turns; a waiter publishes its continuation, then re-checks the turn. */
private class ContinuationTurns {
    /** Whose turn it is (0 or 1). Written by the player whose turn ends, read by both. */
    @Volatile private var turn = 0
    /** Each player's continuation while it waits; taken by the other player to resume it. */
    private val waiting = AtomicReferenceArray<CancellableContinuation<Unit>?>(2)

    suspend fun play(me: Int): Int {
        var played = 0
        repeat(TokioSuite.PING_PONG_ROUNDS) {
            while (turn != me) {
                suspendCancellableCoroutine { continuation ->
                    waiting.set(me, continuation)
                    // The turn may have passed before we published: take ourselves back and go on.
                    if (turn == me && waiting.compareAndSet(me, continuation, null)) {
                        continuation.resume(Unit)
                    }
                }
            }
            played++
            turn = 1 - me
            waiting.getAndSet(1 - me, null)?.resume(Unit)
        }
        return played
    }
}
