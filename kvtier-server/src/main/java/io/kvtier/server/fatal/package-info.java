/**
 * What happens when an {@code Error} reaches a thread that serves clients:
 * {@link io.kvtier.server.fatal.FatalErrorHandler} stops the process. A bottom layer, so that every layer that runs
 * client work can report to it.
 */
package io.kvtier.server.fatal;
