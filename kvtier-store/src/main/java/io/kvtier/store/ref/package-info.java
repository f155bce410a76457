/** Reference counting for bytes shared with readers: memory values and disk regions are freed by their last user. */
package io.kvtier.store.ref;
