package io.kvtier.common;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UnitsTest {
    @Test
    void bytesAreBinaryWholeWhenExactOneDecimalOtherwise() {
        assertThat(Units.bytes(0)).isEqualTo("0 B");
        assertThat(Units.bytes(1023)).isEqualTo("1023 B");
        assertThat(Units.bytes(256 << 10)).isEqualTo("256 KiB");
        assertThat(Units.bytes(3L << 29)).isEqualTo("1.5 GiB");
        assertThat(Units.bytes(5L << 40)).isEqualTo("5 TiB");
    }

    @Test
    void gigabytesAreDecimal() {
        assertThat(Units.gigabytes(2.5e9)).isEqualTo("2.50 GB");
    }
}
