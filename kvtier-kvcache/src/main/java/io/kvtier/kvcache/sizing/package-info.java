/**
 * The sizing calculator behind {@code kvtier size}: a model's KV-cache shape (from a built-in table or a Hugging Face
 * {@code config.json}), the bytes it costs per token, per LMCache chunk and per sequence, and what fits in GPU memory,
 * DRAM and SSD. Pure arithmetic on immutable records; see docs/sizing.md for the formulas and their sources.
 */
package io.kvtier.kvcache.sizing;
