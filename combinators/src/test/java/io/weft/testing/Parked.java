package io.weft.testing;

import io.weft.ParkToken;

/**
 * Whether a thread is parked at a Weft suspend point inside a given method: the probe tests use
 * before they act on a waiting task, so that "it is waiting" means waiting <em>there</em> (not
 * starting up, blocked on a lock, or in some other wait). Thread-safe; the answer is a snapshot.
 */
public final class Parked {
    private Parked() {}

    /**
     * Returns whether {@code thread} is parked (WAITING or TIMED_WAITING) in
     * {@link ParkToken#suspend}, the runtime half of every Weft suspend point, called (directly or
     * not) from {@code method} of {@code owner}.
     *
     * @param thread the thread to look at (a platform thread or a fiber)
     * @param owner the class whose method must be on the parked stack
     * @param method that method's name
     * @return whether it is parked there now
     */
    public static boolean at(Thread thread, Class<?> owner, String method) {
        if (!isWaiting(thread)) {
            return false;
        }
        boolean suspended = false;
        boolean inMethod = false;
        for (StackTraceElement frame : thread.getStackTrace()) {
            suspended |= frame.getClassName().equals(ParkToken.class.getName())
                    && frame.getMethodName().equals("suspend");
            inMethod |= frame.getClassName().equals(owner.getName())
                    && frame.getMethodName().equals(method);
        }
        return suspended && inMethod && isWaiting(thread); // still parked after the stack was taken
    }

    private static boolean isWaiting(Thread thread) {
        Thread.State state = thread.getState();
        return state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING;
    }
}
