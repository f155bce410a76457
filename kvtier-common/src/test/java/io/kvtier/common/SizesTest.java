package io.kvtier.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void parsesPlainNumbersAndBinaryUnitsInAnyCase() {
        assertThat(Sizes.parse("1048576")).isEqualTo(1L << 20);
        assertThat(Sizes.parse("64k")).isEqualTo(64L << 10);
        assertThat(Sizes.parse("64m")).isEqualTo(64L << 20);
        assertThat(Sizes.parse("2g")).isEqualTo(2L << 30);
        assertThat(Sizes.parse("1t")).isEqualTo(1L << 40);
        assertThat(Sizes.parse("512MiB")).isEqualTo(512L << 20);
        assertThat(Sizes.parse("512mb")).isEqualTo(512L << 20);
        assertThat(Sizes.parse("4GiB")).isEqualTo(4L << 30);
        assertThat(Sizes.parse(" 8 M ")).isEqualTo(8L << 20);
        assertThat(Sizes.parse("100b")).isEqualTo(100);
        assertThat(Sizes.parse("2GB")).isEqualTo(2L << 30);
    }

    @Test
    void rejectsWhatIsNotASizeNamingTheInput() {
        for (String bad : new String[] {"", "lots", "-1m", "1.5g", "12x", "ib", "10ib"}) {
            assertThatThrownBy(() -> Sizes.parse(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "'");
        }
        assertThatThrownBy(() -> Sizes.parse("99999999999t")).hasMessageContaining("too large");
        assertThatThrownBy(() -> Sizes.parse("99999999999999t")).hasMessage("'99999999999999t' is too large");
    }
}
