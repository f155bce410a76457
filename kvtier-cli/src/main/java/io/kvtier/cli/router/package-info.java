/** The routing commands: {@code kvtier router} and {@code kvtier engine-sim}. */
package io.kvtier.cli.router;
