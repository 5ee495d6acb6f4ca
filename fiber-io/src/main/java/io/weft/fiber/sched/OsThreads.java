package io.weft.fiber.sched;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the operating system says about a carrier thread, where it says it (Linux's /proc): its
 * kernel thread id, and whether it is running or sleeping in the kernel. Elsewhere every answer
 * is "unknown". Thread-safe.
 */
final class OsThreads {
    private OsThreads() {}

    /** The calling thread's kernel thread id, or -1 if unknown. */
    static int currentTid() {
        try {
            Path self = Files.readSymbolicLink(Path.of("/proc/thread-self")); // "<pid>/task/<tid>"
            return Integer.parseInt(self.getFileName().toString());
        } catch (Exception | LinkageError e) { // not Linux, no /proc, or a sandbox: unknown
            return -1;
        }
    }

    /**
     * The scheduling state of thread {@code tid} of this process: 'R' running or runnable, 'S'
     * sleeping, 'D' waiting for the disk, others as the kernel names them; '?' if unknown.
     */
    static char state(int tid) {
        if (tid < 0) {
            return '?';
        }
        try {
            String stat = Files.readString(Path.of("/proc/self/task/" + tid + "/stat"));
            int end = stat.lastIndexOf(')'); // the name, in parentheses, may hold spaces
            return end > 0 && end + 2 < stat.length() ? stat.charAt(end + 2) : '?';
        } catch (Exception | LinkageError e) {
            return '?';
        }
    }
}
