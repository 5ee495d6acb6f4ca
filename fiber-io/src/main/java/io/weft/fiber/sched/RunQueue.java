package io.weft.fiber.sched;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A worker's local run queue: a lock-free FIFO ring that its owner pushes to and pops from, and
 * that other workers steal half of when they run dry (Tokio's local queue). The ring doubles
 * when the owner finds it full, up to a maximum length; past that, pushes overflow into the
 * injector. Before either, a full ring drops the oldest entries its {@link Sweeper} calls dead.
 * Thread-safety is split by role: {@link #push}, {@link #pop}, {@link #popIfHead} and
 * {@link #drainTo} may be called only by the owning worker's thread; {@link #stealInto} may be
 * called by any other worker, passing its own queue; {@link #size}, {@link #isEmpty} and
 * {@link #capacity} by anyone.
 *
 * <p>A worker's calling pattern:
 *
 * <pre>{@code
 * queue.push(task, injector);                 // spawn or wake on this worker; overflow -> injector
 * Runnable next = queue.pop();                // run own work first, oldest first
 * if (next == null) {
 *     next = victim.stealInto(queue);         // take half of a random victim's queue
 * }
 * }</pre>
 */
final class RunQueue {
    /*
     * Implementation notes.
     *
     * Overview: a ring of `capacity` slots (a power of two, so a position maps to a slot with
     * `position & mask`) indexed by three unsigned 32-bit position counters that only grow and
     * wrap at 2^32: the tail, and a head made of two halves. All position arithmetic is done by
     * subtraction (`tail - real`), which is exact modulo 2^32 as long as the true distance is
     * below 2^31; it never exceeds `capacity` <= 2^30. Counters are never compared with < or >.
     *
     *   head = (steal << 32) | real        one long, changed only by CAS
     *   real   the next position the owner pops or a stealer claims
     *   steal  the oldest position still in use: equal to `real` when no steal is in progress;
     *          during a steal, the first position a stealer claimed and is still copying out
     *   tail   the next position the owner pushes to
     *
     *   [steal, real)  claimed by a stealer, being copied out; the owner must not overwrite it
     *   [real, tail)   queued tasks: the owner pops from `real`, stealers claim from `real`
     *   tail - steal   slots in use; the ring is full when it equals `capacity`
     *
     * Operations (who -> what):
     *
     *   push     owner     slot[tail] = task; tail = tail + 1 (release); head is loaded only
     *                      when tail reaches the cached limit (see "Push without reading head")
     *            if full, first: if no steal and a sweeper says the oldest k entries are dead,
     *            CAS head (r, r) -> (r + k, r + k) and drop them (see "Sweeping a full ring");
     *            then, below the maximum length, grow (see "Growing"); at it:
     *            if full and no steal: CAS head (r, r) -> (r + cap/2, r + cap/2), then move
     *            those cap/2 tasks and the new one to the injector in one batch;
     *            if full during a steal: the new task alone goes to the injector
     *   pushAll  owner     if n more fit (after a sweep as push's, then growing the ring, up to
     *                      its maximum):
     *                      slot[tail .. tail + n) = tasks; tail = tail + n (release), so a batch
     *                      fetched from the injector is published at once; else push each
     *   pop      owner     CAS head (s, r) -> (s == r ? r + 1 : s, r + 1); then read slot[r]
     *   popIfHead owner    read slot[r]; if it is the task, CAS as pop; if not, load head again
     *                      and give up only if it has not moved (see popIfHead)
     *   steal    stealer   claim:   CAS head (r, r) -> (r, r + n), n = ceil((tail - r) / 2)
     *                      copy:    slot[r .. r + n) into dst's slots at dst's tail
     *                      release: CAS head (r, x) -> (x, x), retried while the owner pops
     *                      (x moves) and publishes dst's tail (release)
     *
     * Only one steal runs at a time per queue: a stealer that sees steal != real gives up (the
     * queue is being stolen from anyway, and returning null lets it try another victim). The
     * release CAS must not give up: the tasks are already copied, so abandoning it would leave
     * the queue believing [steal, real) is in use forever. It retries on the fresh `real`, which
     * only the owner's pops can move meanwhile (other stealers give up, and overflow needs
     * steal == real).
     *
     * Shared fields:
     *   head   written by the owner (pop, sweep, overflow) and by stealers (claim, release), always by
     *          CAS; read by both with acquire (getAcquire or the CAS itself).
     *   tail   written only by the owner, with release; read by the owner plainly (its own
     *          write) and by stealers and size() with acquire.
     *   slots  a slot is written by the owner when pushing (a task) or popping (null), and by the
     *          one stealer that claimed it (null, after copying it out). Plain accesses: every
     *          pair of conflicting slot accesses is ordered by happens-before through head or
     *          tail, as below, so the queue is free of data races.
     *
     * Memory ordering:
     *  - Owner push -> stealer read: the slot write precedes the release store of tail; a
     *    stealer's acquire load of tail that sees it (or a later value) sees the task.
     *  - Stealer copy -> owner reuse: the stealer reads and nulls the claimed slots before its
     *    release CAS; the owner writes into them only after an acquire load of head shows
     *    steal past them (until then tail - steal == capacity forbids it), so the stealer's
     *    accesses happen-before the owner's overwrite.
     *  - Pop vs claim: both are CASes on the one head word, so a position is taken by exactly
     *    one of them; the winner reads the slot after its CAS, and nobody else touches that slot
     *    until it is pushed again, which the same orderings cover. The two exceptions are
     *    popIfHead and the sweep, which read slots from r on before their CAS and so may race a
     *    stealer nulling them (a reference read: it sees the task or null); they act on the read
     *    only through their CAS, which fails if any claim came between (see popIfHead, and
     *    "Sweeping a full ring").
     *  - popIfHead and linearizability: it is not linearizable with a steal. A steal sizes its
     *    claim from the tail it read, then CASes head; a popIfHead in between that answers false
     *    (head unchanged) saw the queue before the claim, while the only order that explains the
     *    steal's size puts the steal before the pushes the popIfHead saw. Nothing depends on a
     *    false answer (the entry stays and is skipped when taken); a true answer takes exactly
     *    the position it names. Lincheck covers push, pop and steal; RunQueueTest's concurrent
     *    test puts popIfHead in the owner's mix and checks every task is taken once.
     *  - Stale head in a stealer: it loads head, then tail. If the owner popped and pushed in
     *    between, tail - real may exceed capacity; the claim CAS would fail anyway, and the
     *    stealer reloads head rather than compute n from an impossible distance.
     *  - ABA: the claim CAS could succeed on a stale head only if the owner advanced `real` by
     *    exactly a multiple of 2^32 between the stealer's load and CAS; 4 billion pops in that
     *    window is not a practical concern (Tokio's 64-bit variant makes the same bet).
     *  Volatile (sequentially consistent) CAS is stronger than needed (acquire-release would do)
     *  but Java has no acq-rel CAS, and on x86 and AArch64 (LSE) it costs the same.
     *
     * GC: slots are nulled when their task leaves (pop, steal, sweep, overflow, drain), so a queue does
     * not keep finished tasks, and the fibers they close over, reachable.
     *
     * Push without reading head: the owner keeps `pushLimit`, `steal + capacity` from its last
     * acquire load of head, and writes slot[tail] without loading head again while tail is below
     * it. Head only moves forward (pops and steals advance both halves), so the cached limit is
     * never past the true one, and the acquire load that computed it precedes the write in the
     * owner's program order: the "stealer copy -> owner reuse" ordering above still holds. Only
     * when the tail reaches the cached limit does push load head again (and refresh the limit).
     * Why: head is CASed by every stealer and every pop; a push that loads it on each call
     * misses in cache whenever a thief works on this queue, which is exactly during a burst of
     * spawns (spawn_many_local: the owner's push was ~10% of the spawning task's samples).
     *
     * Growing: when a push finds the ring full and it is shorter than maxCapacity, the owner
     * copies the queued positions [real, tail) into a ring twice as long (each position p at
     * p & newMask) and publishes it with a release store of `slots`; it never writes the old ring
     * again. A stealer loads head, then tail, then `slots` (both acquire), and copies from the
     * ring it loaded:
     *  - every position it can claim is in that ring: positions below the tail it read were
     *    either copied into the ring when it was made or pushed into it after (a push into a
     *    newer ring releases a tail that, once seen, makes the newer ring visible to the later
     *    load of `slots`);
     *  - positions in [steal, real) at the grow (claimed by a stealer still copying) are not
     *    copied: that stealer loaded `slots` before its claim CAS, and the owner's head load
     *    that saw the claim precedes the publish, so it reads the old ring;
     *  - a stealer that claims during the grow (after the owner's head load) may read the old
     *    ring while the new one also holds those tasks: the new ring keeps a stale reference in
     *    each such slot until the owner's pushes wrap around to it. The owner never reads a
     *    position below real, so nothing runs twice; the cost is a few finished tasks kept
     *    reachable a little longer.
     * The ring never shrinks (ForkJoinPool's deques do not either). Why grow instead of
     * overflowing at a fixed length: a burst of local spawns beyond the ring (10,000 in
     * spawn_many_local against 4,096 slots) moved half the ring into the injector at every
     * overflow (a node per task) and every worker fetched it back in batches under the
     * injector's lock: 8.5% of the CPU samples. A ring that grows pays one copy per doubling,
     * once per worker's lifetime, and starts small (256), so idle workers keep 1 KB of slots.
     *
     * Sweeping a full ring: an entry can outlive its task. A job an awaiter claimed and ran in
     * place (join helping), or one cancelled before it started, stays queued until it is taken
     * and skipped. The owner drops the oldest entry at once when it is the job it helped
     * (popIfHead, in-order awaits), but not one further back: a task that awaits its spawns
     * newest first (recursive fork/join, a chain of awaits) leaves them all, and while it runs
     * its worker takes nothing from the queue. Such a task alone filled the ring to its maximum,
     * and every overflow then moved half of it, all dead, into the injector: a node each, the
     * injector's lock, then a worker fetching them back to skip them. With one worker nothing
     * fetches them while the task runs: they grow without bound, each holding its task. A chain
     * of 30 helps, 20,000 times in one task on one worker, cost 103-114 ns per task before the
     * sweep and 56-85 with it (medians of three JVMs' last six rounds); 200,000 times in a 128 MB
     * heap ended in OutOfMemoryError before, and takes 57-79 ns per task with it.
     * So a push that finds the ring full, before it grows or overflows and only if no steal is in
     * progress, asks the queue's Sweeper whether the oldest entries are dead. It reads the slots
     * from `real` while the sweeper says so (stopping at a null: a stealer's claim came between),
     * then CASes head (r, r) -> (r + k, r + k): the same claim an overflow makes, so the k
     * positions are the owner's alone once it succeeds (a stealer's claim that moved head first
     * makes it fail, and the push looks again; the owner's own pops cannot come between). The
     * CAS is what makes reading the slots first safe, as in popIfHead; that dead is for good (a
     * claimed or cancelled job never runs) is what keeps the answers true when the entries go.
     * It nulls them and tells the sweeper which it dropped (so a cancelled job's end is counted
     * as the worker counts a skipped one). pushAll (a batch from the injector) sweeps the same
     * way before it grows a ring too full for the batch.
     * The cost falls only on a push that finds the ring full (or a pushAll that finds it too full
     * for its batch, which the worker's loop fetches while its queue may still hold entries):
     * one sweeper call per entry looked at, one CAS per sweep. Entries are not swept earlier on
     * purpose: the fork/join runs showed dead entries at the head also keep thieves off the
     * newest forks (BENCHMARKS.md, nineteenth session), and the ring is full (short of a batch,
     * for pushAll) only when nothing has taken from it for about a whole ring.
     * Everything after push's first check is out of line (pushLooking), so the push a spawn
     * inlines is its common case alone. With the sweep inline the await chain, where no sweep
     * runs (a probe counted none), measured 5-8% slower in four rounds; out of line, six rounds
     * in a noisy hour put it inside the spread (BENCHMARKS.md, twenty-first session).
     *
     * Alternatives: a Chase-Lev deque (owner pops LIFO at the tail, thieves take one at a time
     * from the head) needs a StoreLoad fence on every owner pop and steals one task per CAS;
     * Weft wants FIFO local order (the LIFO slot provides the cache-hot LIFO step) and batch
     * steals. Padding
     * head and tail onto separate cache lines (as the seed does) is left until a benchmark
     * shows false sharing matters on the target machines.
     */

    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle SLOTS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(RunQueue.class, "head", long.class);
            TAIL = lookup.findVarHandle(RunQueue.class, "tail", int.class);
            SLOTS = lookup.findVarHandle(RunQueue.class, "slots", Runnable[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The ring: replaced by a ring twice as long when the owner finds it full below
     * {@link #maxCapacity} (see "Growing"). Written only by the owner (release); read by the owner
     * plainly and by stealers with acquire, after their acquire load of tail.
     */
    private Runnable[] slots;
    /** The longest the ring grows; a full ring of this length overflows into the injector. */
    private final int maxCapacity;
    /** Says which of a full ring's oldest entries are dead (see "Sweeping a full ring"), or null. */
    private final Sweeper sweeper;

    /**
     * Tells a full queue (or one too full for a batch) which of its oldest entries it may drop
     * instead of growing or overflowing: entries whose task will never run (see "Sweeping a full
     * ring"). Called on the owner's thread only.
     */
    interface Sweeper {
        /** Whether {@code task}, queued, has nothing left to run, for good. */
        boolean isDead(Runnable task);

        /** Called once for each entry the queue dropped after {@link #isDead} said so. */
        void dropped(Runnable task);
    }
    /** {@code (steal << 32) | real}; changed only by CAS, by the owner and by stealers. */
    private volatile long head;
    /** Next position to push; written only by the owner (release), read by others (acquire). */
    private int tail;
    /**
     * Owner only (plain): the position the tail may reach without reading head, i.e. `steal +
     * capacity` as of the owner's last acquire load of head. Head only moves forward, so this is
     * a lower bound of the true limit; see "Push without reading head" in the notes.
     */
    private int pushLimit;

    /**
     * Creates an empty queue.
     *
     * @param capacity the number of slots: a power of two, at least 2 and at most 2^30
     * @throws IllegalArgumentException if {@code capacity} is not such a power of two
     */
    RunQueue(int capacity) {
        this(capacity, capacity, 0);
    }

    /**
     * Returns an empty queue whose ring starts with {@code initialCapacity} slots and doubles, when
     * the owner finds it full, up to {@code maxCapacity}; only then does a push overflow.
     *
     * @param initialCapacity the ring's first length: a power of two, at least 2
     * @param maxCapacity the ring's longest length: a power of two, at least {@code initialCapacity},
     *     at most 2^30
     * @return the queue
     * @throws IllegalArgumentException if either is not such a power of two
     */
    static RunQueue growing(int initialCapacity, int maxCapacity) {
        return new RunQueue(initialCapacity, maxCapacity, 0, null);
    }

    /**
     * As {@link #growing(int, int)}, with a sweeper that a full ring asks which of its oldest
     * entries are dead before it grows or overflows (see "Sweeping a full ring").
     *
     * @param initialCapacity the ring's first length: a power of two, at least 2
     * @param maxCapacity the ring's longest length: a power of two, at least {@code initialCapacity},
     *     at most 2^30
     * @param sweeper called on the owner's thread when a push finds the ring full, or a pushAll
     *     too full for its batch
     * @return the queue
     * @throws IllegalArgumentException if either length is not such a power of two
     */
    static RunQueue growing(int initialCapacity, int maxCapacity, Sweeper sweeper) {
        return new RunQueue(initialCapacity, maxCapacity, 0, Objects.requireNonNull(sweeper, "sweeper"));
    }

    /**
     * Creates an empty fixed-length queue whose position counters start at {@code startIndex} rather than 0, so
     * tests can exercise the wrap of the unsigned counters (start at -1 or near
     * {@link Integer#MAX_VALUE}) without pushing billions of tasks.
     *
     * @param capacity the number of slots: a power of two, at least 2 and at most 2^30
     * @param startIndex the initial value of every position counter, as an unsigned int
     * @throws IllegalArgumentException if {@code capacity} is not such a power of two
     */
    RunQueue(int capacity, int startIndex) {
        this(capacity, capacity, startIndex);
    }

    /**
     * A queue that starts with {@code capacity} slots, grows up to {@code maxCapacity} (as {@link
     * #growing}), and whose position counters start at {@code startIndex} (as {@link
     * #RunQueue(int, int)} does for a fixed ring).
     */
    RunQueue(int capacity, int maxCapacity, int startIndex) {
        this(capacity, maxCapacity, startIndex, null);
    }

    /** As {@link #RunQueue(int, int, int)}, with {@code sweeper} (null for none): as {@link #growing(int, int, Sweeper)}. */
    RunQueue(int capacity, int maxCapacity, int startIndex, Sweeper sweeper) {
        if (capacity < 2 || capacity > 1 << 30 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity must be a power of two in [2, 2^30]: " + capacity);
        }
        if (maxCapacity < capacity || maxCapacity > 1 << 30 || Integer.bitCount(maxCapacity) != 1) {
            throw new IllegalArgumentException("maxCapacity must be a power of two in [capacity, 2^30]: " + maxCapacity
                    + " (capacity " + capacity + ")");
        }
        this.slots = new Runnable[capacity];
        this.maxCapacity = maxCapacity;
        this.sweeper = sweeper;
        this.tail = startIndex;
        this.pushLimit = startIndex + capacity;
        this.head = pack(startIndex, startIndex);
    }

    /**
     * The number of slots. Thread-safe.
     *
     * @return the capacity given at construction
     */
    int capacity() {
        return getSlotsAcquire().length;
    }

    /** The longest the ring may grow to before a push overflows. Thread-safe. */
    int maxCapacity() {
        return maxCapacity;
    }

    /** The head word: it changes whenever a task leaves the queue (a pop or a steal). Any thread. */
    long headWord() {
        return head;
    }

    /**
     * The number of queued tasks, not counting tasks a stealer has claimed but not yet released.
     * Thread-safe; exact for the owner, a snapshot in {@code [0, capacity]} for other threads.
     *
     * @return the number of tasks the owner could pop now
     */
    int size() {
        long h = getHeadAcquire();
        int t = getTailAcquire();
        int n = t - real(h);
        // A non-owner may combine an older head with a newer tail; keep the snapshot plausible.
        return Math.clamp(n, 0, maxCapacity);
    }

    /**
     * Makes room for {@code count} more tasks as {@link #pushAll} would (dropping dead entries,
     * growing the ring up to its longest; without memory to grow, it stays as it is), and returns
     * how many tasks it could then take without allocating: a {@code pushAll} of at most that many
     * neither grows the ring nor overflows. Owner only: steals can only make the room larger.
     *
     * @param count how many tasks the caller would like to queue
     * @return the free slots of the ring then, at least 0
     */
    int roomFor(int count) {
        try {
            makeRoom(count);
        } catch (OutOfMemoryError noMemory) {
            // the ring as it is: its room is what the caller may take
        }
        return Math.max(slots.length - (tail - steal(getHeadAcquire())), 0);
    }

    /**
     * Whether no task is queued. Thread-safe; a snapshot like {@link #size()}.
     *
     * @return true if the queue held no poppable task when read
     */
    boolean isEmpty() {
        return size() == 0;
    }

    /**
     * Appends a task at the tail. Owner only. Never fails for lack of room: if the ring is full,
     * the oldest entries its sweeper calls dead are dropped; if none are, a ring below its maximum
     * length grows; at the maximum, half of it (the {@code capacity / 2} oldest tasks) and then {@code task} move to
     * {@code overflow} in one batch, in that order; if a steal is in progress at that moment (so
     * half cannot be claimed), only {@code task} goes to {@code overflow}. It fails only for lack
     * of memory (the longer ring, the Injector's nodes), and then queued nothing: every allocation
     * comes before the change it serves, and an overflow whose batch cannot be pushed puts the
     * half it claimed back (see tryPushOverflow).
     *
     * @param task the task, not null
     * @param overflow where tasks go when the ring is full
     */
    void push(Runnable task, Injector overflow) {
        Objects.requireNonNull(task, "task");
        int t = tail;
        if (t - pushLimit < 0) { // room as of an earlier look at head: no read of the stealers' line
            Runnable[] ring = slots;
            ring[t & (ring.length - 1)] = task;
            setTailRelease(t + 1);
            return;
        }
        pushLooking(task, overflow, t);
    }

    /**
     * The rest of {@link #push} once the tail reached the cached limit: looks at head, and pushes
     * into the room found, or sweeps, grows or overflows. Out of line, so that the push a spawn
     * inlines stays the few bytecodes of its common case.
     */
    private void pushLooking(Runnable task, Injector overflow, int t) {
        while (true) {
            long h = getHeadAcquire();
            int steal = steal(h);
            Runnable[] ring = slots;
            pushLimit = steal + ring.length;
            if (t - steal < ring.length) {
                ring[t & (ring.length - 1)] = task;
                setTailRelease(t + 1);
                return;
            }
            if (sweeper != null && steal == real(h) && sweep(h, t)) {
                continue; // dead entries dropped (or head moved): look again
            }
            if (ring.length < maxCapacity) {
                grow(ring, real(h), t);
                continue; // the retry finds room in the longer ring
            }
            if (steal != real(h)) {
                overflow.push(task);
                return;
            }
            if (tryPushOverflow(task, h, t, overflow)) {
                return;
            }
            // A stealer claimed tasks between our load of head and the CAS: there is room now.
        }
    }

    /**
     * Drops the dead entries at the head of the full ring, if head is still {@code h} (no steal
     * in progress; {@code t} is the tail) and the sweeper calls the oldest dead. Returns false
     * if the oldest entry is not dead (the ring stays full), true if the push should look again:
     * it dropped some, or head moved meanwhile. Owner only; see "Sweeping a full ring".
     */
    private boolean sweep(long h, int t) {
        Runnable[] ring = slots;
        int mask = ring.length - 1;
        int real = real(h);
        int k = 0;
        for (int p = real; p != t; p++, k++) {
            Runnable task = ring[p & mask]; // may race a stealer's null: then its claim fails our CAS
            if (task == null || !sweeper.isDead(task)) {
                break;
            }
        }
        if (k == 0) {
            return false;
        }
        if (compareAndExchangeHead(h, pack(real + k, real + k)) != h) {
            return true; // a stealer's claim came first: look at the new head
        }
        // These positions are ours alone now, as after an overflow's claim
        for (int i = 0; i < k; i++) {
            int index = (real + i) & mask;
            Runnable task = ring[index];
            ring[index] = null;
            sweeper.dropped(task);
        }
        return true;
    }

    /**
     * Replaces the full ring {@code ring} by one twice as long holding the queued positions
     * {@code [real, tail)}, and publishes it (release). Owner only; see "Growing" in the notes.
     */
    private void grow(Runnable[] ring, int real, int tail) {
        Runnable[] longer = new Runnable[ring.length * 2];
        int from = ring.length - 1;
        int to = longer.length - 1;
        for (int p = real; p != tail; p++) {
            longer[p & to] = ring[p & from];
        }
        SLOTS.setRelease(this, longer);
    }

    /**
     * Makes room for {@code count} more tasks if it can: drops the dead oldest entries of a full
     * ring (as {@link #push} does), else grows the ring, up to its longest. Returns the ring as it
     * is then, which may still lack room (at its longest). Owner only; may throw OutOfMemoryError
     * (growing), leaving the queue as it was.
     */
    private Runnable[] makeRoom(int count) {
        int t = tail;
        Runnable[] ring = slots;
        long h = getHeadAcquire();
        while (t - steal(h) > ring.length - count) {
            if (sweeper != null && steal(h) == real(h) && sweep(h, t)) {
                h = getHeadAcquire(); // dead entries dropped (or head moved): look again
                continue;
            }
            if (ring.length == maxCapacity) {
                break;
            }
            grow(ring, real(h), t);
            ring = slots;
            h = getHeadAcquire();
        }
        return ring;
    }

    /**
     * Appends {@code tasks[from .. from + count)} in order at the tail. Owner only. Never fails:
     * when the ring has (or, after dropping dead oldest entries as {@link #push} does, or growing,
     * gets) room for all of them, they are published with one release store of the tail;
     * otherwise each goes through {@link #push}, overflow included.
     *
     * @param tasks the array holding the tasks; not modified
     * @param from the index of the first task
     * @param count how many tasks, at least 0
     * @param overflow where tasks go when the ring is full
     * @throws IndexOutOfBoundsException if the range is not inside {@code tasks}
     * @throws NullPointerException if an element in the range is null (nothing is pushed)
     */
    void pushAll(Runnable[] tasks, int from, int count, Injector overflow) {
        Objects.checkFromIndexSize(from, count, tasks.length);
        for (int i = from; i < from + count; i++) {
            Objects.requireNonNull(tasks[i], "task");
        }
        int t = tail;
        Runnable[] ring = makeRoom(count); // still published at once below: a stealer sees all or none
        long h = getHeadAcquire();
        if (t - steal(h) > ring.length - count) {
            for (int i = from; i < from + count; i++) {
                push(tasks[i], overflow); // at the longest ring: the overflow takes its share
            }
            return;
        }
        int mask = ring.length - 1;
        for (int i = 0; i < count; i++) {
            ring[(t + i) & mask] = tasks[from + i];
        }
        setTailRelease(t + count);
    }

    /**
     * Moves the {@code capacity / 2} oldest tasks and {@code task} to {@code overflow}, if head is
     * still {@code h} (full, no steal in progress; {@code t} is the tail). If the move fails (no
     * memory for the Injector's nodes), the claimed tasks go back into the ring, behind the others,
     * and the failure is thrown: {@code task} is not queued, and nothing else is lost.
     */
    private boolean tryPushOverflow(Runnable task, long h, int t, Injector overflow) {
        Runnable[] ring = slots;
        int mask = ring.length - 1;
        int half = ring.length / 2;
        int real = real(h);
        int next = real + half;
        Runnable[] batch = new Runnable[half + 1]; // before the claim: past it, a failure must not lose the half
        if (compareAndExchangeHead(h, pack(next, next)) != h) {
            return false;
        }
        // These positions are ours alone now: the owner's CAS moved both heads past them.
        for (int i = 0; i < half; i++) {
            int index = (real + i) & mask;
            batch[i] = ring[index];
            ring[index] = null;
        }
        batch[half] = task;
        try {
            overflow.pushBatch(batch, 0, batch.length);
        } catch (Throwable e) {
            // The ring was full at t = real + capacity, so [t, t + half) are the slots just
            // emptied, still ours (stealers only read below tail): requeue the half there, at the
            // back (an order no push promises under failure), and publish them like a push does
            for (int i = 0; i < half; i++) {
                ring[(t + i) & mask] = batch[i];
            }
            setTailRelease(t + half);
            throw e;
        }
        return true;
    }

    /**
     * Removes the oldest task. Owner only. Lock-free: retries only when a stealer moved the head
     * concurrently.
     *
     * @return the task, or null if the queue is empty (tasks a stealer has claimed are not
     *     counted)
     */
    Runnable pop() {
        int t = tail;
        long h = getHeadAcquire();
        while (true) {
            int steal = steal(h);
            int real = real(h);
            if (real == t) {
                return null;
            }
            int nextReal = real + 1;
            // During a steal, keep `steal` where it is: the stealer is still copying from there.
            long next = steal == real ? pack(nextReal, nextReal) : pack(steal, nextReal);
            long witness = compareAndExchangeHead(h, next);
            if (witness == h) {
                Runnable[] ring = slots;
                int index = real & (ring.length - 1);
                Runnable task = ring[index];
                ring[index] = null;
                return task;
            }
            h = witness;
        }
    }

    /**
     * Removes {@code task} if it is the oldest task queued, the one {@link #pop} would return;
     * returns whether it did. Owner only. For a task that left the queue another way (an awaiter
     * claimed and ran it in place): its entry would cost whoever takes it a look at the task, a
     * miss in cache for a stealer on another core.
     *
     * <p>The slot is read before the CAS that claims its position: a stealer claiming that position
     * at the same time may be nulling the slot, so the read sees the task or null. A match is
     * acted on only through the CAS, which succeeds only if head has not moved since it was
     * loaded (then no stealer claimed the position, and the slot held what this owner pushed
     * there): a true answer is never wrong. A mismatch is checked against head again: if head
     * moved, the look is repeated at the new head (without it, Lincheck found popIfHead(a) answer
     * false on [a, b, a] while a steal that took only the first a was nulling its slot). If a
     * weakly ordered machine shows the null before the claim that preceded it, the answer is a
     * spurious false: the entry stays, and whoever takes it later skips it, as before. The loop
     * is pop's, repeated rather than shared: one method for both measured 0.3 to 1.4 ns slower
     * per job run on a runner.
     */
    boolean popIfHead(Runnable task) {
        int t = tail;
        long h = getHeadAcquire();
        while (true) {
            int steal = steal(h);
            int real = real(h);
            if (real == t) {
                return false;
            }
            Runnable[] ring = slots;
            int index = real & (ring.length - 1);
            if (ring[index] != task) {
                long again = getHeadAcquire();
                if (again == h) {
                    return false;
                }
                h = again; // a stealer claimed (and may have nulled) the slot: look at the new head
                continue;
            }
            int nextReal = real + 1;
            long next = steal == real ? pack(nextReal, nextReal) : pack(steal, nextReal);
            long witness = compareAndExchangeHead(h, next);
            if (witness == h) {
                ring[index] = null;
                return true;
            }
            h = witness;
        }
    }

    /**
     * Steals half of this queue's tasks (rounded up: 4 queued -> 2 stolen, 3 -> 2, 1 -> 1) into
     * {@code dst}, and returns the newest of them to be run at once; the others are appended to
     * {@code dst}, oldest first. Called by the owner of {@code dst} (not of this queue); any
     * number of threads may call it on the same victim concurrently. Takes no more than
     * {@code dst} has room for.
     *
     * @param dst the caller's own queue, not this one; normally empty
     * @return one stolen task, or null if this queue was empty, another steal from it was in
     *     progress, or {@code dst} was full
     * @throws IllegalArgumentException if {@code dst} is this queue
     */
    Runnable stealInto(RunQueue dst) {
        if (dst == this) {
            throw new IllegalArgumentException("a queue cannot steal from itself");
        }
        int dstTail = dst.tail;
        Runnable[] dstSlots = dst.slots; // the caller's own queue: its own field
        int room = dstSlots.length - (dstTail - steal(dst.getHeadAcquire()));
        if (room <= 0) {
            return null;
        }

        // Claim: move `real` past the tasks we take, leave `steal` at the first of them.
        long h = getHeadAcquire();
        int first;
        int n;
        Runnable[] ring;
        while (true) {
            int steal = steal(h);
            int real = real(h);
            if (steal != real) {
                return null;
            }
            int available = getTailAcquire() - real;
            // After tail: a ring loaded now holds every position below the tail just read ("Growing")
            ring = getSlotsAcquire();
            if (available < 0 || available > ring.length) {
                h = getHeadAcquire(); // head was stale: the owner popped and pushed meanwhile
                continue;
            }
            if (available == 0) {
                return null;
            }
            n = Math.min(available - available / 2, room);
            long claimed = pack(steal, real + n);
            long witness = compareAndExchangeHead(h, claimed);
            if (witness == h) {
                first = real;
                h = claimed;
                break;
            }
            h = witness;
        }

        // Copy: positions [first, first + n) are ours; the owner will not overwrite them until
        // the release below moves `steal` past them.
        int mask = ring.length - 1;
        int dstMask = dstSlots.length - 1;
        for (int i = 0; i < n - 1; i++) {
            int index = (first + i) & mask;
            dstSlots[(dstTail + i) & dstMask] = ring[index];
            ring[index] = null;
        }
        int lastIndex = (first + n - 1) & mask;
        Runnable last = ring[lastIndex];
        ring[lastIndex] = null;

        // Release: steal = real. Only the owner's pops can move `real` meanwhile; follow them.
        while (true) {
            int real = real(h);
            long witness = compareAndExchangeHead(h, pack(real, real));
            if (witness == h) {
                break;
            }
            h = witness;
        }
        if (n > 1) {
            dst.setTailRelease(dstTail + n - 1);
        }
        return last;
    }

    /**
     * Moves every queued task to {@code injector}, oldest first, in one batch. Owner only; used
     * when the worker shuts down. Tasks a concurrent stealer has claimed stay with that stealer.
     *
     * @param injector where the tasks go
     * @return how many tasks were moved
     */
    int drainTo(Injector injector) {
        Runnable[] batch = new Runnable[slots.length];
        int count = 0;
        Runnable task = pop();
        while (task != null) {
            batch[count++] = task;
            task = pop();
        }
        injector.pushBatch(batch, 0, count);
        return count;
    }

    @Override
    public String toString() {
        long h = getHeadAcquire();
        return "RunQueue[steal=" + Integer.toUnsignedString(steal(h))
                + ", real=" + Integer.toUnsignedString(real(h))
                + ", tail=" + Integer.toUnsignedString(getTailAcquire())
                + ", capacity=" + getSlotsAcquire().length + "]";
    }

    private static long pack(int steal, int real) {
        return ((long) steal << 32) | (real & 0xFFFF_FFFFL);
    }

    private static int steal(long head) {
        return (int) (head >>> 32);
    }

    private static int real(long head) {
        return (int) head;
    }

    private long getHeadAcquire() {
        return (long) HEAD.getAcquire(this);
    }

    private long compareAndExchangeHead(long expected, long next) {
        return (long) HEAD.compareAndExchange(this, expected, next);
    }

    private Runnable[] getSlotsAcquire() {
        return (Runnable[]) SLOTS.getAcquire(this);
    }

    private int getTailAcquire() {
        return (int) TAIL.getAcquire(this);
    }

    private void setTailRelease(int t) {
        TAIL.setRelease(this, t);
    }
}
