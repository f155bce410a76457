/** The {@code kvtier} command line: picocli subcommands mapping flags and config files onto validated options. */
package io.kvtier.cli;
