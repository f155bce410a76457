package io.kvtier.store;

/** Where a live value can be read from without I/O (MEMORY) or only with a disk read (DISK). */
public enum Residence {
    MEMORY, DISK
}
