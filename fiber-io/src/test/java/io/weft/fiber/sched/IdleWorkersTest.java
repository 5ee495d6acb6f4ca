package io.weft.fiber.sched;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The idle-worker protocol: who searches, who is parked, who gets woken. */
class IdleWorkersTest {

    @Test
    void everyWorkerStartsUnparkedAndNotSearching() {
        IdleWorkers idle = new IdleWorkers(4);
        assertEquals(4, idle.unparked());
        assertEquals(0, idle.searching());
        assertEquals(-1, idle.workerToNotify(), "nobody is parked: nobody to wake");
    }

    @Test
    void atMostHalfTheWorkersSearch() {
        IdleWorkers idle = new IdleWorkers(4);
        assertTrue(idle.tryBecomeSearcher());
        assertTrue(idle.tryBecomeSearcher());
        assertFalse(idle.tryBecomeSearcher(), "a third searcher of four");
        assertEquals(2, idle.searching());
        IdleWorkers three = new IdleWorkers(3);
        assertTrue(three.tryBecomeSearcher());
        assertFalse(three.tryBecomeSearcher(), "half of three, rounded down");
        IdleWorkers single = new IdleWorkers(1);
        assertTrue(single.tryBecomeSearcher(), "a single worker may search");
        assertFalse(single.tryBecomeSearcher());
    }

    @Test
    void theLastSearcherToFindWorkMustWakeAnother() {
        IdleWorkers idle = new IdleWorkers(4);
        idle.tryBecomeSearcher();
        idle.tryBecomeSearcher();
        assertFalse(idle.transitionFromSearching(), "another searcher remains");
        assertTrue(idle.transitionFromSearching(), "the last searcher");
        assertEquals(0, idle.searching());
    }

    @Test
    void aProducerWakesTheLowestParkedWorkerOnlyWhenNobodySearches() {
        IdleWorkers idle = new IdleWorkers(4);
        idle.transitionToParked(2, false);
        idle.transitionToParked(1, false);
        assertEquals(2, idle.unparked());
        idle.tryBecomeSearcher();
        assertEquals(-1, idle.workerToNotify(), "a searcher will find the work");
        idle.transitionFromSearching();
        assertEquals(1, idle.workerToNotify(), "the lowest parked worker");
        assertEquals(3, idle.unparked());
        assertEquals(1, idle.searching(), "the woken worker counts as searching");
        assertEquals(-1, idle.workerToNotify(), "it is searching now: no second wake-up");
        assertFalse(idle.isParked(1));
        assertTrue(idle.isParked(2));
    }

    @Test
    void aNotifiedWorkerLearnsItMustSearchAndATimedOutOneThatItMustNot() {
        IdleWorkers idle = new IdleWorkers(2);
        idle.transitionToParked(0, false);
        idle.transitionToParked(1, false);
        assertEquals(0, idle.workerToNotify());
        assertFalse(idle.unparkWorkerById(0), "taken by a notifier: it must search");
        assertTrue(idle.unparkWorkerById(1), "woke by itself: still in the parked set");
        assertEquals(2, idle.unparked());
        assertEquals(1, idle.searching());
    }

    @Test
    void theLastSearcherToParkIsTold() {
        IdleWorkers idle = new IdleWorkers(4);
        idle.tryBecomeSearcher();
        idle.tryBecomeSearcher();
        assertFalse(idle.transitionToParked(0, true), "one searcher left");
        assertTrue(idle.transitionToParked(1, true), "the last searcher must re-check the queues");
        assertFalse(idle.transitionToParked(2, false), "not a searcher");
        assertEquals(1, idle.unparked());
    }

    @Test
    void workerCountsOutOfRangeAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> new IdleWorkers(0));
        assertThrows(IllegalArgumentException.class, () -> new IdleWorkers(65));
        IdleWorkers max = new IdleWorkers(64);
        max.transitionToParked(63, false);
        assertEquals(63, max.workerToNotify(), "the 64th worker's bit works");
    }

    @Test
    void aSpareIsCountedInWhenActivatedAndOutWhenItRetires() {
        IdleWorkers idle = new IdleWorkers(2);
        idle.activate(2);
        assertEquals(3, idle.active());
        assertEquals(3, idle.unparked());
        assertEquals(1, idle.searching(), "a spare starts out searching");
        assertFalse(idle.tryBecomeSearcher(), "half of three, rounded down: the spare is that one searcher");
        // the spare finds no work and parks; nobody wakes it: it retires
        idle.transitionToParked(2, true);
        assertTrue(idle.retire(2));
        assertEquals(2, idle.active());
        assertEquals(2, idle.unparked());
        assertFalse(idle.isParked(2));
        assertThrows(IllegalStateException.class, () -> idle.activate(64));
    }

    @Test
    void aSpareANotifierTookDoesNotRetire() {
        IdleWorkers idle = new IdleWorkers(1);
        idle.activate(1);
        idle.transitionToParked(1, true);
        assertEquals(1, idle.workerToNotify(), "work arrived: the parked spare is woken");
        assertFalse(idle.retire(1), "it was taken: it must search, not retire");
        assertEquals(2, idle.active());
        assertEquals(1, idle.searching());
    }
}
