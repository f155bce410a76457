package io.kvtier.common.chart;

import java.nio.file.Path;

/** The two files one chart was written to: the same picture as a bitmap and as vector graphics. */
public record ChartFiles(Path png, Path svg) {}
