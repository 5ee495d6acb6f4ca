/**
 * Weft's Io protocol made executable: abstract JUnit 5 contract classes that every
 * {@link io.weft.Io} implementation's test suite extends, so that each rule of the protocol is
 * written once and checked against every runtime.
 */
module io.weft.protocol {
    requires transitive io.weft;
    requires transitive org.junit.jupiter.api;
    requires awaitility;

    exports io.weft.protocol;

    opens io.weft.protocol to
            org.junit.platform.commons;
}
