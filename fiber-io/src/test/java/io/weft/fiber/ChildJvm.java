package io.weft.fiber;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a test class's {@code main} in a fresh JVM with this JVM's class path: for behaviour that
 * depends on JVM-wide state set up once (the JDK's socket pollers) or on the command line.
 */
final class ChildJvm {
    /** What the child printed and how it ended; {@code exitCode} is -1 if it was killed at the timeout. */
    record Result(int exitCode, String output) {}

    private ChildJvm() {}

    /**
     * Runs {@code main} with {@code args}, with or without FiberIo's {@code --add-opens} flag, and
     * waits up to {@code timeoutSeconds} for it to end.
     */
    static Result run(boolean withFlag, long timeoutSeconds, Class<?> main, String... args)
            throws IOException, InterruptedException {
        return run(
                withFlag ? List.of("--add-opens", "java.base/java.lang=ALL-UNNAMED") : List.of(),
                timeoutSeconds,
                main,
                args);
    }

    /** Runs {@code main} with {@code args} and the JVM options {@code jvmOptions}; see the other run. */
    static Result run(List<String> jvmOptions, long timeoutSeconds, Class<?> main, String... args)
            throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        Path log = Files.createTempFile("weft-child", ".log");
        try {
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            boolean ended = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
            if (!ended) {
                process.destroyForcibly().waitFor();
            }
            return new Result(ended ? process.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
