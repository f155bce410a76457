package io.kvtier.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ZipfSamplerTest {

    @Test
    void probabilitiesFollowOneOverRankToTheExponentAndSumToOne() {
        ZipfSampler zipf = new ZipfSampler(100, 1.0);
        double harmonic = IntStream.rangeClosed(1, 100).mapToDouble(k -> 1.0 / k).sum();
        assertThat(zipf.probability(0)).isCloseTo(1 / harmonic, within(1e-12));
        assertThat(zipf.probability(9)).isCloseTo(zipf.probability(0) / 10, within(1e-12));
        assertThat(IntStream.range(0, 100).mapToDouble(zipf::probability).sum()).isCloseTo(1.0, within(1e-9));
    }

    @Test
    void drawsWithASeededRandomMatchTheDistribution() {
        ZipfSampler zipf = new ZipfSampler(50, 1.2);
        int[] counts = new int[50];
        Random random = new Random(42);
        int draws = 200_000;
        for (int i = 0; i < draws; i++) {
            counts[zipf.sample(random)]++;
        }
        for (int rank : new int[] {0, 1, 2, 9, 49}) {
            double expected = zipf.probability(rank) * draws;
            assertThat((double) counts[rank]).as("rank %d", rank)
                    .isCloseTo(expected, within(5 * Math.sqrt(expected) + 1));
        }
        assertThat(counts[0]).isGreaterThan(counts[1]).isGreaterThan(counts[2]);
    }

    @Test
    void theSameSeedGivesTheSameDraws() {
        ZipfSampler zipf = new ZipfSampler(1000, 0.9);
        Random a = new Random(7);
        Random b = new Random(7);
        for (int i = 0; i < 1000; i++) {
            assertThat(zipf.sample(a)).isEqualTo(zipf.sample(b));
        }
    }

    @Test
    void exponentZeroIsUniformAndASingleRankIsAlwaysDrawn() {
        ZipfSampler uniform = new ZipfSampler(4, 0);
        IntStream.range(0, 4).forEach(k -> assertThat(uniform.probability(k)).isCloseTo(0.25, within(1e-12)));
        ZipfSampler one = new ZipfSampler(1, 1.0);
        Random random = new Random(1);
        IntStream.range(0, 100).forEach(i -> assertThat(one.sample(random)).isZero());
    }
}
