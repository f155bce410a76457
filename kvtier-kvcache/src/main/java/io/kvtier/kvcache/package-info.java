/** The KV-cache layer: what an LLM inference engine's KV-cache keys mean, and the capacity arithmetic around them. */
package io.kvtier.kvcache;
