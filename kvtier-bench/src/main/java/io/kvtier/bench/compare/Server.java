package io.kvtier.bench.compare;

/** The two systems a comparison runs, in the order each round runs them (A B A B). */
public enum Server {
    KVTIER("kvtier"),
    REDIS("Redis");

    private final String label;

    Server(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
