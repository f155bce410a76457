/**
 * The memory tier: a hard byte budget of off-heap slabs ({@code java.lang.foreign}) cut into 64 KiB pages; large
 * values span pages (scatter/gather), small ones take a chunk of a size-class page. Values are reference-counted
 * so their bytes are never reused under a reader.
 */
package io.kvtier.store.memory;
