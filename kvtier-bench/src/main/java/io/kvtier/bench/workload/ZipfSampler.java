package io.kvtier.bench.workload;

import java.util.Arrays;
import java.util.random.RandomGenerator;

/**
 * Draws ranks {@code 0..n-1} with probability proportional to {@code 1/(rank+1)^s}, by binary search over the
 * precomputed cumulative distribution (O(n) memory, O(log n) per draw). Immutable; thread-safe as long as each
 * caller brings its own random generator.
 */
final class ZipfSampler {
    private final double[] cumulative;

    ZipfSampler(int n, double exponent) {
        if (n < 1) {
            throw new IllegalArgumentException("a Zipf distribution needs at least one rank, not " + n);
        }
        cumulative = new double[n];
        double sum = 0;
        for (int k = 0; k < n; k++) {
            sum += weight(k, exponent);
            cumulative[k] = sum;
        }
        for (int k = 0; k < n; k++) {
            cumulative[k] /= sum;
        }
        cumulative[n - 1] = 1.0;
    }

    private static double weight(int rank, double exponent) {
        return 1.0 / Math.pow(rank + 1, exponent);
    }

    /** P(rank), for tests and reports. */
    double probability(int rank) {
        return cumulative[rank] - (rank == 0 ? 0 : cumulative[rank - 1]);
    }

    int sample(RandomGenerator random) {
        double u = random.nextDouble();
        int i = Arrays.binarySearch(cumulative, u);
        int rank = i >= 0 ? i : -i - 1;
        return Math.min(rank, cumulative.length - 1);
    }
}
