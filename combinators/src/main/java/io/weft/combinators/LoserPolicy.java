package io.weft.combinators;

/**
 * What {@link Futures#race} does with the losers after it has cancelled them. Immutable.
 */
public enum LoserPolicy {
    /**
     * Return (or rethrow) the winner's outcome as soon as the winner is known and the losers have
     * been asked to cancel; losers unwind in the background. The cheapest choice; like
     * {@link io.weft.Io#race}.
     */
    RETURN_AT_WINNER,
    /**
     * Cancel the losers, then wait (shielded) until every loser has finished unwinding, so their
     * {@code finally} blocks have run before the race reports the winner; like
     * {@link io.weft.Io#raceAndJoin}.
     */
    JOIN_LOSERS
}
