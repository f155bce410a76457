package io.kvtier.router.sim;

/** How long an engine step takes on the modeled GPU. Implementations are immutable. */
public interface StepCost {
    /** Seconds the step {@code batch} takes; 0 for an empty batch. */
    double seconds(StepBatch batch);

    /** A line for logs and reports: what the model is. */
    String describe();

    /**
     * The routing tests' flat model: {@code prefillMicros} per prompt token computed plus {@code decodeMicros} per step
     * that decodes anything (every decoding request gets a token each step).
     */
    static StepCost perToken(long prefillMicros, long decodeMicros) {
        return new StepCost() {
            @Override
            public double seconds(StepBatch b) {
                return (b.prefillTokens() * prefillMicros + (b.decodeSeqs() > 0 ? decodeMicros : 0)) / 1e6;
            }

            @Override
            public String describe() {
                return prefillMicros + " us per prefill token, " + decodeMicros + " us per decode step";
            }
        };
    }
}
