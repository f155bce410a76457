/** Loads and saves through a local kvtier server's shared memory (KVC.SHM), with RESP as the fallback. */
package io.kvtier.client.shm;
