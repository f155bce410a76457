/** {@code kvtier size}: the sizing calculator's command line, its table for people and its JSON for machines. */
package io.kvtier.cli.sizing;
