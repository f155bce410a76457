/** The routing commands: {@code kvtier engine-sim} (and, to come, {@code kvtier router} and {@code kvtier map}). */
package io.kvtier.cli.router;
