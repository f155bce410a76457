/** Prompt text to token ids, and chat messages to prompt text: one token per byte and a fixed chat template for now. */
package io.kvtier.router.tokens;
