/**
 * {@link io.weft.fiber.FiberIo}: tasks as JDK virtual threads whose carrier scheduler is Weft's
 * own work-stealing scheduler. Needs {@code --add-opens java.base/java.lang=io.weft.fiber} on the
 * module path ({@code ALL-UNNAMED} on the class path).
 */
module io.weft.fiber {
    requires transitive io.weft;
    requires java.management; // the stall watch reads carriers' CPU time

    exports io.weft.fiber;
}
