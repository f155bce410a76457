package io.kvtier.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The instantaneous_* figures: the mean of the last 16 per-interval rates, as Redis computes them. */
class InstantaneousRatesTest {
    private static final long PERIOD = InstantaneousRates.PERIOD_MILLIS * 1_000_000;

    @Test
    void reportsTheMeanRateOfTheLastSixteenIntervals() {
        InstantaneousRates rates = new InstantaneousRates();
        assertThat(rates.opsPerSecond()).isZero();
        long commands = 0;
        long input = 0;
        rates.sample(0, commands, input, 0);
        for (int i = 1; i <= InstantaneousRates.SAMPLES; i++) {
            commands += 100; // 1,000 a second
            input += 1024 * 10; // 100 KiB a second
            rates.sample(i * PERIOD, commands, input, 0);
        }
        assertThat(rates.opsPerSecond()).isEqualTo(1000);
        assertThat(rates.inputKbps()).isCloseTo(100.0, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(rates.outputKbps()).isZero();
        for (int i = 1; i <= InstantaneousRates.SAMPLES / 2; i++) { // idle for half the window
            rates.sample((InstantaneousRates.SAMPLES + i) * PERIOD, commands, input, 0);
        }
        assertThat(rates.opsPerSecond()).isEqualTo(500);
        rates.sample((InstantaneousRates.SAMPLES * 2) * PERIOD, 0, 0, 0); // CONFIG RESETSTAT zeroed the counters
        assertThat(rates.opsPerSecond()).isEqualTo(7 * 1000 / 16); // no rate from the interval that went back
    }
}
