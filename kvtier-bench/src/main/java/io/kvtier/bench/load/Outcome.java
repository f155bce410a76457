package io.kvtier.bench.load;

/** What one command came to: done (SET OK, GET value, EXISTS 1), a miss (nil, 0), or an error. */
public enum Outcome {
    OK, MISS, ERROR
}
