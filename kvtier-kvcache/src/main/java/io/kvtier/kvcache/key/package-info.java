/** What LMCache's keys say: the model, the worker and which part of a KV-cache chunk a key holds. */
package io.kvtier.kvcache.key;
