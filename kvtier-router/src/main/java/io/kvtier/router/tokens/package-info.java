/** Prompt text to token ids: the model's own tokenizer where one is given, else one token per byte. */
package io.kvtier.router.tokens;
